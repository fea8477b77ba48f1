// SPDX-License-Identifier: GPL-2.0-only
/*
 * farend: a far-end exchange for isupgw's interop tests, built on libss7.
 *
 * This is a test program. It links the system's libss7 (GPL-2) and is
 * distributed under the same licence; isupgw itself never links it. See
 * README.md beside it for how to build and run it.
 *
 * It speaks MTP2 signal units (libss7 link type 1, one datagram per signal
 * unit, two placeholder octets in place of the FCS) on an AF_UNIX
 * SOCK_SEQPACKET socket, runs libss7's MTP3 and ISUP on top, and prints one
 * JSON line on stdout for every event it sees or message it sends.
 *
 * libss7 reads and writes an inner socketpair; this program relays between
 * that and the real socket. The relay lets it log every signal unit as it
 * crosses the wire (--wire), including the ones libss7 sends on its own, and
 * lets it hold the far end's IAM back until its own IAM is out, which is the
 * only way to force a dual seizure through libss7's API.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <libss7.h>

/* ------------------------------------------------------------------ */
/* options and global state                                            */

enum mode { MODE_ANSWER, MODE_ORIGINATE, MODE_SCRIPT };
enum answer_policy { ANS_FULL, ANS_ACM_ONLY, ANS_REJECT, ANS_NONE };

enum cstate {
	C_IDLE,
	C_OUT_IAM,  /* IAM sent, waiting for ACM */
	C_OUT_ACM,  /* ACM received */
	C_OUT_ANS,  /* ANM or CON received */
	C_IN_IAM,   /* IAM received */
	C_IN_ACM,   /* ACM sent */
	C_IN_ANS,   /* ANM sent */
	C_RELEASING /* REL sent, waiting for RLC */
};

enum action { A_NONE, A_ACM, A_ANM, A_REL };

struct circuit {
	int cic;
	struct isup_call *call;
	enum cstate state;
	int lblk_m, lblk_h; /* we blocked it (maintenance, hardware) */
	int rblk_m, rblk_h; /* the far end blocked it */
	int unequipped;     /* the far end said UCIC */
	int answered;       /* this call reached ANM/CON */
	int originated;     /* counted as one of the originate calls */
	int reevent;        /* dual seizure lost: re-deliver the far end's IAM */
	long long due;      /* when to run due_action, ms; 0 = never */
	enum action due_action;
	int due_cause;
	char called[64], calling[64];
};

static struct {
	int variant; /* SS7_ITU or SS7_ANSI */
	unsigned int opc, dpc;
	int slc;
	int ni;
	int cic_first, cic_last;
	int fd;                 /* inherited socket */
	const char *connect_path, *listen_path;
	enum mode mode;
	int orig_n;
	double orig_rate;
	const char *script_path;
	const char *called, *calling;
	int called_nai, calling_nai;
	enum answer_policy answer;
	int reject_cause;
	int acm_delay, anm_delay, hold, release_cause;
	int cpg;
	int grs; /* send GRS over the CIC range when the link comes up */
	int await_grs; /* READY also waits for the far end's start-up GRS */
	int wire;
	int debug;
	int stay;   /* originate: keep running after DONE */
	int linger; /* ms to keep running before exiting */
} opt = {
	.variant = SS7_ITU,
	.opc = 0, .dpc = 0,
	.slc = 0,
	.ni = SS7_NI_NAT,
	.cic_first = 1, .cic_last = 31,
	.fd = -1,
	.called = "1234", .calling = "5678",
	.called_nai = SS7_NAI_NATIONAL, .calling_nai = SS7_NAI_NATIONAL,
	.answer = ANS_FULL,
	.reject_cause = 17,
	.release_cause = 16,
	.grs = 1,
	.linger = 200,
};

static struct ss7 *ss7;
static struct circuit *circuits;
static int ncircuits;
static long long t0;
static volatile sig_atomic_t got_signal;
static int sigpipe[2] = {-1, -1};

/* link and start-up */
static int link_up;      /* SS7_EVENT_UP seen */
static int ready;        /* READY emitted: link up and start-up resets acknowledged */
static int grs_pending;  /* start-up GRS chunks without a GRA yet */
static int grs_first_cic[16];
static int grs_count;
static int grs_received;

/* originate mode */
static int orig_started, orig_answered, orig_completed, orig_failed, orig_active, orig_repeats;
static long long orig_first_ms, orig_last_ms, orig_next_ms;
static int orig_rr;
static int done_emitted;

/* script mode */
static int script_fd = -1;
static char script_buf[8192];
static int script_len;
static int script_eof;
static long long script_wait_until;

/* exit */
static long long exit_at;
static const char *exit_reason;
static int exit_code;

/* glare: hold the far end's IAM until ours is out */
static int glare_cic;
static long long glare_deadline;
static char glare_called[64], glare_calling[64];
static int glare_holding;
#define HELD_MAX 64
static unsigned char *held[HELD_MAX];
static int held_len[HELD_MAX];
static int nheld;

/* counters reported at exit */
struct counter {
	char name[12];
	int rx, tx, wire_rx, wire_tx;
};
static struct counter counters[64];
static int ncounters;
static int errors_logged, unexpected_logged;

static int last_lssu[2] = {-1, -1};
static int setting_up; /* drop libss7's "timer = ms" chatter while configuring */

/* ------------------------------------------------------------------ */
/* time and JSON                                                        */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char jbuf[8192];
static size_t jlen;

static void japp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void japp(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (jlen >= sizeof(jbuf) - 8) {
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(jbuf + jlen, sizeof(jbuf) - 8 - jlen, fmt, ap);
	va_end(ap);
	if (n > 0) {
		jlen += (size_t)n;
		if (jlen > sizeof(jbuf) - 8) {
			jlen = sizeof(jbuf) - 8;
		}
	}
}

static void jbegin(const char *dir, const char *msg)
{
	jlen = 0;
	japp("{\"t\":%lld,\"dir\":\"%s\",\"msg\":\"%s\"", now_ms() - t0, dir, msg);
}

static void jint(const char *k, long long v)
{
	japp(",\"%s\":%lld", k, v);
}

static void jstr(const char *k, const char *s)
{
	const unsigned char *p;

	japp(",\"%s\":\"", k);
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			japp("\\%c", *p);
		} else if (*p < 0x20 || *p >= 0x7f) {
			japp("\\u%04x", *p);
		} else {
			japp("%c", *p);
		}
	}
	japp("\"");
}

static void jend(void)
{
	japp("}\n");
	fwrite(jbuf, 1, jlen, stdout);
	fflush(stdout);
}

static struct counter *counter(const char *name)
{
	int i;

	for (i = 0; i < ncounters; i++) {
		if (!strcmp(counters[i].name, name)) {
			return &counters[i];
		}
	}
	if (ncounters == (int)(sizeof(counters) / sizeof(counters[0]))) {
		return &counters[ncounters - 1];
	}
	snprintf(counters[ncounters].name, sizeof(counters[0].name), "%s", name);
	return &counters[ncounters++];
}

/* ev starts a line for a message seen (rx) or sent (tx) at ISUP level. */
static void ev(const char *dir, const char *msg, int cic)
{
	struct counter *c = counter(msg);

	if (!strcmp(dir, "rx")) {
		c->rx++;
	} else if (!strcmp(dir, "tx")) {
		c->tx++;
	}
	jbegin(dir, msg);
	if (cic >= 0) {
		jint("cic", cic);
	}
}

static void jstatus(const char *k, const unsigned char *st, int n)
{
	char s[260];
	int i;

	for (i = 0; i < n && i < 256; i++) {
		s[i] = st[i] ? '1' : '0';
	}
	s[i] = 0;
	jstr(k, s);
}

static void local_event(const char *msg, const char *text)
{
	jbegin("local", msg);
	if (text) {
		jstr("text", text);
	}
	jend();
}

/* ------------------------------------------------------------------ */
/* circuits                                                             */

static struct circuit *find_circuit(int cic)
{
	if (cic < opt.cic_first || cic > opt.cic_last) {
		return NULL;
	}
	return &circuits[cic - opt.cic_first];
}

/* adopt records libss7's call structure for a circuit: libss7 finds calls
 * by CIC and OPC, so there is one per circuit as long as we always reuse it. */
static struct circuit *adopt(int cic, struct isup_call *c)
{
	struct circuit *ci = find_circuit(cic);

	if (!ci || !c) {
		return ci;
	}
	if (!ci->call) {
		ci->call = c;
	} else if (ci->call != c) {
		jbegin("log", "TWO_CALLS");
		jint("cic", cic);
		jend();
	}
	return ci;
}

static void clear_circuit(struct circuit *ci)
{
	if (ci->originated && ci->state != C_IDLE) {
		if (ci->answered) {
			orig_completed++;
		} else {
			orig_failed++;
		}
		orig_active--;
		orig_last_ms = now_ms();
	}
	ci->state = C_IDLE;
	ci->answered = 0;
	ci->originated = 0;
	ci->due = 0;
	ci->due_action = A_NONE;
}

/* drop_call forgets the call on a circuit and frees libss7's structure. */
static void drop_call(struct circuit *ci)
{
	struct isup_call *c = ci->call;

	clear_circuit(ci);
	ci->call = NULL;
	if (c) {
		isup_free_call(ss7, c);
	}
}

/* maybe_free frees libss7's structure once nothing is pending on it. */
static void maybe_free(struct circuit *ci)
{
	if (ci && ci->call && ci->state == C_IDLE && !ci->reevent) {
		if (!isup_free_call_if_clear(ss7, ci->call)) {
			ci->call = NULL;
		}
	}
}

/* free_unowned frees an event's call structure that no circuit holds. */
static void free_unowned(int cic, struct isup_call *c)
{
	struct circuit *ci = find_circuit(cic);

	if (c && (!ci || ci->call != c)) {
		isup_free_call_if_clear(ss7, c);
	}
}

static struct isup_call *call_for(struct circuit *ci, int outgoing)
{
	if (!ci->call) {
		ci->call = isup_new_call(ss7, ci->cic, opt.dpc, outgoing);
	}
	return ci->call;
}

/* Circuit state indicator, Q.763 3.14: bits BA (maintenance blocking),
 * DC (call processing), FE (hardware blocking). */
static unsigned char circuit_state(int cic)
{
	struct circuit *ci = find_circuit(cic);
	int ba, dc, fe;

	if (!ci) {
		return 0x03; /* unequipped: BA=11, DC=00 */
	}
	ba = (ci->lblk_m ? 1 : 0) | (ci->rblk_m ? 2 : 0);
	fe = (ci->lblk_h ? 1 : 0) | (ci->rblk_h ? 2 : 0);
	switch (ci->state) {
	case C_IDLE:
		dc = 3;
		break;
	case C_IN_IAM:
	case C_IN_ACM:
	case C_IN_ANS:
		dc = 1;
		break;
	case C_OUT_IAM:
	case C_OUT_ACM:
	case C_OUT_ANS:
		dc = 2;
		break;
	default:
		return 0x00; /* transient */
	}
	return (unsigned char)(ba | (dc << 2) | (fe << 4));
}

/* ------------------------------------------------------------------ */
/* sending                                                              */

static void tx_simple(const char *msg, struct circuit *ci)
{
	ev("tx", msg, ci->cic);
	jend();
}

static int send_acm(struct circuit *ci)
{
	if (!ci->call || isup_acm(ss7, ci->call) < 0) {
		return -1;
	}
	ci->state = C_IN_ACM;
	tx_simple("ACM", ci);
	if (opt.cpg && ci->call && isup_cpg(ss7, ci->call, CPG_EVENT_ALERTING) >= 0) {
		ev("tx", "CPG", ci->cic);
		jint("event", CPG_EVENT_ALERTING);
		jend();
	}
	return 0;
}

static int send_anm(struct circuit *ci)
{
	if (!ci->call || isup_anm(ss7, ci->call) < 0) {
		return -1;
	}
	ci->state = C_IN_ANS;
	ci->answered = 1;
	tx_simple("ANM", ci);
	return 0;
}

static int send_rel(struct circuit *ci, int cause)
{
	if (!ci->call || isup_rel(ss7, ci->call, cause) < 0) {
		return -1;
	}
	if (ci->originated && ci->state != C_IDLE && !ci->answered) {
		/* released before answer: counted when RLC arrives */
	}
	ci->state = C_RELEASING;
	ci->due = 0;
	ev("tx", "REL", ci->cic);
	jint("cause", cause);
	jend();
	return 0;
}

static int place_call(struct circuit *ci, const char *called, const char *calling)
{
	struct isup_call *c = call_for(ci, 1);

	if (!c) {
		return -1;
	}
	isup_set_called(c, called, (unsigned char)opt.called_nai, ss7);
	if (calling && calling[0]) {
		isup_set_calling(c, calling, (unsigned char)opt.calling_nai, SS7_PRESENTATION_ALLOWED,
			SS7_SCREENING_USER_PROVIDED);
	}
	snprintf(ci->called, sizeof(ci->called), "%s", called);
	snprintf(ci->calling, sizeof(ci->calling), "%s", calling ? calling : "");
	if (isup_iam(ss7, c) < 0) {
		/* libss7 has freed the call and told us through call_null */
		ci->call = NULL;
		jbegin("local", "IAM_FAILED");
		jint("cic", ci->cic);
		jend();
		return -1;
	}
	ci->state = C_OUT_IAM;
	ci->answered = 0;
	ev("tx", "IAM", ci->cic);
	jstr("called", called);
	if (opt.variant == SS7_ITU) {
		jint("st", 1); /* isup_set_called appends the ST digit in ITU */
	}
	jint("called_nai", opt.called_nai);
	if (calling && calling[0]) {
		jstr("calling", calling);
		jint("calling_nai", opt.calling_nai);
	}
	jend();
	return 0;
}

static int circuit_free_for_call(struct circuit *ci)
{
	return ci->state == C_IDLE && !ci->call && !ci->lblk_m && !ci->lblk_h && !ci->rblk_m &&
		!ci->rblk_h && !ci->unequipped && !ci->reevent && ci->cic != glare_cic;
}

static struct circuit *pick_free_circuit(void)
{
	int i;

	for (i = 0; i < ncircuits; i++) {
		struct circuit *ci = &circuits[(orig_rr + i) % ncircuits];
		if (circuit_free_for_call(ci)) {
			orig_rr = (int)(ci - circuits) + 1;
			return ci;
		}
	}
	return NULL;
}

static void send_grs(int first, int range)
{
	int cic;
	struct circuit *ci;
	struct isup_call *c;

	for (cic = first; cic <= first + range; cic++) {
		ci = find_circuit(cic);
		if (!ci) {
			continue;
		}
		if (cic == first && ci->call) {
			clear_circuit(ci);
			isup_clear_callflags(ss7, ci->call, ISUP_CALL_CONNECTED | ISUP_CALL_PENDING |
				ISUP_SENT_REL | ISUP_SENT_RSC);
		} else if (ci->call) {
			drop_call(ci);
		} else {
			clear_circuit(ci);
		}
	}
	ci = find_circuit(first);
	if (ci) {
		c = call_for(ci, 0);
	} else {
		c = isup_new_call(ss7, first, opt.dpc, 0);
	}
	if (!c || isup_grs(ss7, c, first + range) < 0) {
		if (ci) {
			ci->call = NULL;
		}
		jbegin("local", "GRS_FAILED");
		jint("cic", first);
		jend();
		return;
	}
	ev("tx", "GRS", first);
	jint("range", range);
	jend();
}

/* ------------------------------------------------------------------ */
/* libss7 callbacks                                                     */

static void log_line(const char *level, char *m)
{
	size_t n = strlen(m);

	while (n && (m[n - 1] == '\n' || m[n - 1] == '\r')) {
		m[--n] = 0;
	}
	if (!n) {
		return;
	}
	jbegin("log", level);
	jstr("text", m);
	jend();
}

static void cb_message(struct ss7 *s, char *m)
{
	int cic;
	unsigned int pc;

	(void)s;
	if (sscanf(m, "Dual seizure on CIC %d DPC %u", &cic, &pc) == 2 && strstr(m, "we are the controlling")) {
		jbegin("local", "DUAL_SEIZURE");
		jint("cic", cic);
		jint("controlling", 1);
		jend();
	}
	if (setting_up) {
		return;
	}
	if (strstr(m, "but we didn't") || strstr(m, "unexpected") || strstr(m, "but no ")) {
		unexpected_logged++;
	}
	log_line("message", m);
}

static void cb_error(struct ss7 *s, char *m)
{
	(void)s;
	errors_logged++;
	log_line("error", m);
}

/* cb_hangup is libss7 asking the application to end a call: on a timer
 * expiry (send REL), an unexpected message (send RSC) or a lost dual
 * seizure (re-deliver the far end's IAM). libss7 calls it without a NULL
 * check, so it must be registered. */
static int cb_hangup(struct ss7 *s, int cic, unsigned int dpc, int cause, int do_hangup)
{
	struct circuit *ci = find_circuit(cic);
	const char *what = "other";

	(void)s;
	switch (do_hangup) {
	case SS7_HANGUP_SEND_REL:
		what = "send_rel";
		break;
	case SS7_HANGUP_SEND_RSC:
		what = "send_rsc";
		break;
	case SS7_HANGUP_REEVENT_IAM:
		what = "reevent_iam";
		break;
	case SS7_HANGUP_FREE_CALL:
		what = "free_call";
		break;
	}
	jbegin("local", "HANGUP");
	jint("cic", cic);
	jint("dpc", dpc);
	jint("cause", cause);
	jstr("action", what);
	jend();
	if (!ci) {
		return SS7_CIC_NOT_EXISTS;
	}
	switch (do_hangup) {
	case SS7_HANGUP_SEND_RSC:
		/* libss7 sends the RSC itself when we answer "idle" */
		clear_circuit(ci);
		ev("tx", "RSC", cic);
		jint("auto", 1);
		jend();
		return SS7_CIC_IDLE;
	case SS7_HANGUP_SEND_REL:
		ci->due = now_ms();
		ci->due_action = A_REL;
		ci->due_cause = cause;
		return SS7_CIC_USED;
	case SS7_HANGUP_REEVENT_IAM:
		/* Q.764 2.9.1.4: the non-controlling exchange gives way and
		 * makes an automatic repeat attempt on another circuit. */
		jbegin("local", "DUAL_SEIZURE");
		jint("cic", cic);
		jint("controlling", 0);
		jend();
		ci->reevent = 1;
		return SS7_CIC_USED;
	default:
		return SS7_CIC_USED;
	}
}

static void cb_call_null(struct ss7 *s, struct isup_call *c, int lock)
{
	int i;

	(void)s;
	(void)lock;
	for (i = 0; i < ncircuits; i++) {
		if (circuits[i].call == c) {
			jbegin("local", "CALL_NULL");
			jint("cic", circuits[i].cic);
			jend();
			clear_circuit(&circuits[i]);
			circuits[i].call = NULL;
			circuits[i].reevent = 0;
		}
	}
}

static void cb_notinservice(struct ss7 *s, int cic, unsigned int dpc)
{
	(void)s;
	jbegin("local", "NOT_IN_SERVICE");
	jint("cic", cic);
	jint("dpc", dpc);
	jend();
}

/* ------------------------------------------------------------------ */
/* events from libss7                                                   */

static void repeat_attempt(const char *called, const char *calling, int originated)
{
	struct circuit *ci = pick_free_circuit();

	orig_repeats++;
	if (!ci) {
		local_event("REPEAT_FAILED", "no free circuit");
		if (originated) {
			orig_failed++;
			orig_active--;
		}
		return;
	}
	jbegin("local", "REPEAT");
	jint("cic", ci->cic);
	jend();
	if (place_call(ci, called, calling) == 0) {
		ci->originated = originated;
	} else if (originated) {
		orig_failed++;
		orig_active--;
	}
}

static void process_reevents(void)
{
	int i;

	for (i = 0; i < ncircuits; i++) {
		struct circuit *ci = &circuits[i];
		char called[64], calling[64];
		int originated;

		if (!ci->reevent) {
			continue;
		}
		ci->reevent = 0;
		if (!ci->call) {
			continue;
		}
		snprintf(called, sizeof(called), "%s", ci->called);
		snprintf(calling, sizeof(calling), "%s", ci->calling);
		originated = ci->originated;
		ci->originated = 0; /* the repeat carries the count */
		ci->state = C_IDLE;
		isup_clear_callflags(ss7, ci->call, ISUP_SENT_IAM | ISUP_PENDING_IAM);
		isup_event_iam(ss7, ci->call, (int)opt.dpc);
		repeat_attempt(called, calling, originated);
	}
}

static void schedule_answer(struct circuit *ci)
{
	long long now = now_ms();

	switch (opt.answer) {
	case ANS_FULL:
	case ANS_ACM_ONLY:
		ci->due = now + opt.acm_delay;
		ci->due_action = A_ACM;
		break;
	case ANS_REJECT:
		ci->due = now + opt.acm_delay;
		ci->due_action = A_REL;
		ci->due_cause = opt.reject_cause;
		break;
	case ANS_NONE:
		break;
	}
}

static void on_iam(ss7_event_iam *e)
{
	struct circuit *ci = adopt(e->cic, e->call);

	ev("rx", "IAM", e->cic);
	jstr("called", e->called_party_num);
	jint("called_nai", e->called_nai);
	if (e->calling_party_num[0]) {
		jstr("calling", e->calling_party_num);
		jint("calling_nai", e->calling_nai);
	}
	jint("pres", e->presentation_ind);
	jint("screen", e->screening_ind);
	jint("cpc", e->calling_party_cat);
	jint("opc", e->opc);
	if (ci && (ci->lblk_m || ci->lblk_h)) {
		jint("lblocked", 1);
	}
	if (ci && (ci->rblk_m || ci->rblk_h)) {
		jint("rblocked", 1);
	}
	jend();
	if (!ci) {
		/* Q.764 2.12: an unequipped circuit is answered with UCIC */
		isup_ucic(ss7, e->cic, e->opc);
		ev("tx", "UCIC", e->cic);
		jend();
		if (e->call) {
			isup_free_call(ss7, e->call);
		}
		return;
	}
	if (ci->state != C_IDLE) {
		jbegin("local", "IAM_BUSY");
		jint("cic", e->cic);
		jint("state", ci->state);
		jend();
	}
	ci->state = C_IN_IAM;
	ci->answered = 0;
	snprintf(ci->called, sizeof(ci->called), "%s", e->called_party_num);
	snprintf(ci->calling, sizeof(ci->calling), "%s", e->calling_party_num);
	schedule_answer(ci);
}

static void on_rel(ss7_event_rel *e)
{
	struct circuit *ci = adopt(e->cic, e->call);

	ev("rx", "REL", e->cic);
	jint("cause", e->cause);
	jend();
	if (e->call && isup_rlc(ss7, e->call) >= 0) {
		ev("tx", "RLC", e->cic);
		jend();
	}
	if (ci && ci->call) {
		drop_call(ci);
	} else if (e->call) {
		isup_free_call(ss7, e->call);
	}
}

static void on_rlc(ss7_event_cic *e)
{
	struct circuit *ci = adopt(e->cic, e->call);

	ev("rx", "RLC", e->cic);
	jend();
	if (ci && ci->call) {
		drop_call(ci);
	} else if (e->call) {
		isup_free_call(ss7, e->call);
	}
}

static void on_rsc(ss7_event_rsc *e)
{
	struct circuit *ci = adopt(e->cic, e->call);

	ev("rx", "RSC", e->cic);
	jend();
	/* Q.764 2.9.3.1: release any call, clear a remote blocking, answer RLC */
	if (ci) {
		ci->rblk_m = 0;
	}
	if (e->call && isup_rlc(ss7, e->call) >= 0) {
		ev("tx", "RLC", e->cic);
		jend();
	}
	if (ci && ci->call) {
		drop_call(ci);
	} else if (e->call) {
		isup_free_call(ss7, e->call);
	}
}

static void on_grs(ss7_event_cicrange *e)
{
	unsigned char status[256];
	int cic, i, range = e->endcic - e->startcic;
	struct circuit *start = find_circuit(e->startcic);
	struct isup_call *c = e->call;

	ev("rx", "GRS", e->startcic);
	jint("range", range);
	jend();
	grs_received++;
	/* Q.764 2.9.3.2: every circuit in the range goes idle; remote
	 * maintenance blocking is removed; GRA reports our local blocking. */
	for (cic = e->startcic, i = 0; cic <= e->endcic; cic++, i++) {
		struct circuit *ci = find_circuit(cic);
		status[i] = 0;
		if (!ci) {
			continue;
		}
		ci->rblk_m = 0;
		status[i] = ci->lblk_m ? 1 : 0;
		if (ci->call && ci->call != c) {
			drop_call(ci);
		} else {
			clear_circuit(ci);
		}
	}
	if (start && start->call == c && c) {
		isup_clear_callflags(ss7, c, ISUP_CALL_CONNECTED | ISUP_CALL_PENDING | ISUP_SENT_REL |
			ISUP_SENT_RSC);
	}
	if (c && isup_gra(ss7, c, e->endcic, status) >= 0) {
		ev("tx", "GRA", e->startcic);
		jint("range", range);
		jstatus("status", status, range + 1);
		jend();
	} else if (start) {
		start->call = NULL;
	}
	if (start && start->call) {
		maybe_free(start);
	} else {
		free_unowned(e->startcic, c);
	}
}

static void on_gra(ss7_event_cicrange *e)
{
	int cic, i, range = e->endcic - e->startcic;

	ev("rx", "GRA", e->startcic);
	jint("range", range);
	jstatus("status", e->status, range + 1);
	jend();
	/* Q.764 2.9.3.2: GRA status bits are the far end's maintenance blocking */
	for (cic = e->startcic, i = 0; cic <= e->endcic; cic++, i++) {
		struct circuit *ci = find_circuit(cic);
		if (ci) {
			ci->rblk_m = e->status[i] ? 1 : 0;
		}
	}
	for (i = 0; i < grs_count; i++) {
		if (grs_first_cic[i] == e->startcic) {
			grs_first_cic[i] = -1;
			grs_pending--;
		}
	}
	adopt(e->startcic, e->call);
	maybe_free(find_circuit(e->startcic));
	free_unowned(e->startcic, e->call);
}

/* BLO or UBL for one circuit (Q.764 2.8.2): mark the remote maintenance
 * block and acknowledge with BLA or UBA (libss7 leaves the answer to us). */
static void on_block(ss7_event_cic *e, int block)
{
	struct circuit *ci = adopt(e->cic, e->call);
	ev("rx", block ? "BLO" : "UBL", e->cic);
	jend();
	if (ci) {
		ci->rblk_m = block;
	}
	if (e->call && (block ? isup_bla(ss7, e->call) : isup_uba(ss7, e->call)) >= 0) {
		ev("tx", block ? "BLA" : "UBA", e->cic);
		jend();
	} else if (ci) {
		ci->call = NULL;
	}
	maybe_free(ci);
	free_unowned(e->cic, e->call);
}

static void on_group_block(ss7_event_cicrange *e, int block)
{
	unsigned char status[256];
	int cic, i, range = e->endcic - e->startcic;
	struct circuit *start = adopt(e->startcic, e->call);
	const char *name = block ? "CGB" : "CGU";

	ev("rx", name, e->startcic);
	jint("range", range);
	jint("type", e->type);
	jstatus("status", e->status, range + 1);
	jend();
	for (i = 0; i <= range; i++) {
		status[i] = e->status[i];
	}
	if (block) {
		if (e->call && isup_cgba(ss7, e->call, e->endcic, status) >= 0) {
			ev("tx", "CGBA", e->startcic);
			jint("range", range);
			jint("type", e->type);
			jstatus("status", status, range + 1);
			jend();
		} else if (start) {
			start->call = NULL;
		}
	} else {
		if (e->call && isup_cgua(ss7, e->call, e->endcic, status) >= 0) {
			ev("tx", "CGUA", e->startcic);
			jint("range", range);
			jint("type", e->type);
			jstatus("status", status, range + 1);
			jend();
		} else if (start) {
			start->call = NULL;
		}
	}
	/* Q.764 2.9.2.3: status bits name the circuits; hardware blocking also
	 * releases the calls on them. */
	for (cic = e->startcic, i = 0; cic <= e->endcic; cic++, i++) {
		struct circuit *ci = find_circuit(cic);
		if (!ci || !e->status[i]) {
			continue;
		}
		if (e->type == 1) {
			ci->rblk_h = block;
			if (block && ci->state != C_IDLE) {
				jbegin("local", "CALL_CLEARED");
				jint("cic", cic);
				jend();
				if (ci->call) {
					drop_call(ci);
				} else {
					clear_circuit(ci);
				}
			}
		} else {
			ci->rblk_m = block;
		}
	}
	if (start) {
		maybe_free(start);
	}
	free_unowned(e->startcic, e->call);
}

static void on_group_ack(ss7_event_cicrange *e, int block)
{
	int range = e->endcic - e->startcic;

	ev("rx", block ? "CGBA" : "CGUA", e->startcic);
	jint("range", range);
	jint("type", e->type);
	jstatus("status", e->status, range + 1);
	jend();
	adopt(e->startcic, e->call);
	maybe_free(find_circuit(e->startcic));
	free_unowned(e->startcic, e->call);
}

static void on_cqm(ss7_event_cicrange *e)
{
	unsigned char status[256];
	int cic, i, range = e->endcic - e->startcic;
	char hex[600];

	ev("rx", "CQM", e->startcic);
	jint("range", range);
	jend();
	hex[0] = 0;
	for (cic = e->startcic, i = 0; cic <= e->endcic && i < 256; cic++, i++) {
		status[i] = circuit_state(cic);
		snprintf(hex + 2 * i, sizeof(hex) - 2 * i, "%02x", status[i]);
	}
	if (isup_cqr(ss7, e->startcic, e->endcic, e->opc, status) >= 0) {
		ev("tx", "CQR", e->startcic);
		jint("range", range);
		jstr("states", hex);
		jend();
	}
	adopt(e->startcic, e->call);
	maybe_free(find_circuit(e->startcic));
	free_unowned(e->startcic, e->call);
}

static void handle_event(ss7_event *e)
{
	struct circuit *ci;

	switch (e->e) {
	case SS7_EVENT_UP:
		local_event("SS7_UP", NULL);
		link_up = 1;
		if (opt.grs) {
			int first;
			grs_count = 0;
			grs_pending = 0;
			for (first = opt.cic_first; first <= opt.cic_last && grs_count < 16; first += 32) {
				int range = opt.cic_last - first;
				if (range > 31) {
					range = 31;
				}
				grs_first_cic[grs_count++] = first;
				grs_pending++;
				send_grs(first, range);
			}
		}
		break;
	case SS7_EVENT_DOWN:
		local_event("SS7_DOWN", NULL);
		link_up = 0;
		break;
	case MTP2_LINK_UP:
		local_event("MTP2_UP", NULL);
		break;
	case MTP2_LINK_DOWN:
		local_event("MTP2_DOWN", NULL);
		break;
	case ISUP_EVENT_IAM:
		on_iam(&e->iam);
		break;
	case ISUP_EVENT_SAM:
		ev("rx", "SAM", e->sam.cic);
		jstr("called", e->sam.called_party_num);
		jend();
		break;
	case ISUP_EVENT_ACM:
		ci = adopt(e->acm.cic, e->acm.call);
		ev("rx", "ACM", e->acm.cic);
		jint("called_status", e->acm.called_party_status_ind);
		jend();
		if (ci && ci->state == C_OUT_IAM) {
			ci->state = C_OUT_ACM;
		}
		break;
	case ISUP_EVENT_CPG:
		adopt(e->cpg.cic, e->cpg.call);
		ev("rx", "CPG", e->cpg.cic);
		jint("event", e->cpg.event);
		jend();
		break;
	case ISUP_EVENT_ANM:
	case ISUP_EVENT_CON:
		/* ss7_event_anm and ss7_event_con differ in layout */
		if (e->e == ISUP_EVENT_ANM) {
			ci = adopt(e->anm.cic, e->anm.call);
			ev("rx", "ANM", e->anm.cic);
		} else {
			ci = adopt(e->con.cic, e->con.call);
			ev("rx", "CON", e->con.cic);
		}
		jend();
		if (ci && (ci->state == C_OUT_IAM || ci->state == C_OUT_ACM)) {
			ci->state = C_OUT_ANS;
			ci->answered = 1;
			if (ci->originated) {
				orig_answered++;
			}
			if (opt.mode == MODE_ORIGINATE) {
				ci->due = now_ms() + opt.hold;
				if (!ci->due) {
					ci->due = 1;
				}
				ci->due_action = A_REL;
				ci->due_cause = opt.release_cause;
			}
		}
		break;
	case ISUP_EVENT_REL:
		on_rel(&e->rel);
		break;
	case ISUP_EVENT_RLC:
		on_rlc(&e->rlc);
		break;
	case ISUP_EVENT_RSC:
		on_rsc(&e->rsc);
		break;
	case ISUP_EVENT_GRS:
		on_grs(&e->grs);
		break;
	case ISUP_EVENT_GRA:
		on_gra(&e->gra);
		break;
	case ISUP_EVENT_CGB:
		on_group_block(&e->cgb, 1);
		break;
	case ISUP_EVENT_CGU:
		on_group_block(&e->cgu, 0);
		break;
	case ISUP_EVENT_CGBA:
		on_group_ack(&e->cgba, 1);
		break;
	case ISUP_EVENT_CGUA:
		on_group_ack(&e->cgua, 0);
		break;
	case ISUP_EVENT_CQM:
		on_cqm(&e->cqm);
		break;
	case ISUP_EVENT_BLO:
		on_block(&e->blo, 1);
		break;
	case ISUP_EVENT_UBL:
		on_block(&e->ubl, 0);
		break;
	case ISUP_EVENT_BLA:
	case ISUP_EVENT_UBA:
		ci = adopt(e->bla.cic, e->bla.call);
		ev("rx", e->e == ISUP_EVENT_BLA ? "BLA" : "UBA", e->bla.cic);
		jend();
		maybe_free(ci);
		free_unowned(e->bla.cic, e->bla.call);
		break;
	case ISUP_EVENT_UCIC:
		ci = adopt(e->ucic.cic, e->ucic.call);
		ev("rx", "UCIC", e->ucic.cic);
		jend();
		if (ci) {
			/* Q.764 2.12: stop using the circuit; a call on it is gone */
			ci->unequipped = 1;
			if (ci->call) {
				drop_call(ci);
			}
		} else if (e->ucic.call) {
			isup_free_call(ss7, e->ucic.call);
		}
		break;
	case ISUP_EVENT_SUS:
	case ISUP_EVENT_RES:
		adopt(e->sus.cic, e->sus.call);
		ev("rx", e->e == ISUP_EVENT_SUS ? "SUS" : "RES", e->sus.cic);
		jint("network", e->sus.network_isdn_indicator);
		jend();
		break;
	case ISUP_EVENT_COT:
	case ISUP_EVENT_CCR:
	case ISUP_EVENT_LPA:
	case ISUP_EVENT_CVT:
	case ISUP_EVENT_FAR:
	case ISUP_EVENT_FAA:
	case ISUP_EVENT_FRJ:
	case ISUP_EVENT_DIGITTIMEOUT:
	default:
		jbegin("rx", "OTHER");
		jstr("event", ss7_event2str(e->e));
		jend();
		break;
	}
}

static void drain_events(void)
{
	ss7_event *e;
	int n = 0;

	while ((e = ss7_check_event(ss7)) && n++ < 1000) {
		handle_event(e);
	}
}

/* ------------------------------------------------------------------ */
/* wire decoding (--wire) and the relay                                 */

static const char *isup_name(int t)
{
	static const struct {
		int t;
		const char *n;
	} names[] = {
		{0x01, "IAM"}, {0x02, "SAM"}, {0x03, "INR"}, {0x04, "INF"}, {0x05, "COT"},
		{0x06, "ACM"}, {0x07, "CON"}, {0x08, "FOT"}, {0x09, "ANM"}, {0x0c, "REL"},
		{0x0d, "SUS"}, {0x0e, "RES"}, {0x10, "RLC"}, {0x11, "CCR"}, {0x12, "RSC"},
		{0x13, "BLO"}, {0x14, "UBL"}, {0x15, "BLA"}, {0x16, "UBA"}, {0x17, "GRS"},
		{0x18, "CGB"}, {0x19, "CGU"}, {0x1a, "CGBA"}, {0x1b, "CGUA"}, {0x1f, "FAR"},
		{0x20, "FAA"}, {0x21, "FRJ"}, {0x24, "LPA"}, {0x28, "PAM"}, {0x29, "GRA"},
		{0x2a, "CQM"}, {0x2b, "CQR"}, {0x2c, "CPG"}, {0x2d, "USR"}, {0x2e, "UCIC"},
		{0x2f, "CFN"}, {0x30, "OLM"}, {0x31, "CRG"}, {0x32, "NRM"}, {0x33, "FAC"},
		{0xe9, "CRA"}, {0xea, "CRM"}, {0xeb, "CVR"}, {0xec, "CVT"}, {0xed, "EXM"},
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].t == t) {
			return names[i].n;
		}
	}
	return NULL;
}

static const char *snm_name(int si, int h0h1)
{
	if (si == 1 || si == 2) {
		switch (h0h1) {
		case 0x11:
			return "SLTM";
		case 0x21:
			return "SLTA";
		}
		return NULL;
	}
	switch (h0h1) {
	case 0x11: return "COO";
	case 0x21: return "COA";
	case 0x51: return "CBD";
	case 0x61: return "CBA";
	case 0x12: return "ECO";
	case 0x22: return "ECA";
	case 0x13: return "RCT";
	case 0x23: return "TFC";
	case 0x14: return "TFP";
	case 0x34: return "TFR";
	case 0x54: return "TFA";
	case 0x15: return "RST";
	case 0x25: return "RSR";
	case 0x16: return "LIN";
	case 0x26: return "LUN";
	case 0x36: return "LIA";
	case 0x46: return "LUA";
	case 0x56: return "LID";
	case 0x66: return "LFU";
	case 0x76: return "LLT";
	case 0x86: return "LRT";
	case 0x17: return "TRA";
	case 0x1a: return "UPU";
	}
	return NULL;
}

struct su_info {
	int is_msu;
	int si;
	int cic;
	int isup_type;
};

/* decode_su reads one MTP2 signal unit as libss7 link type 1 frames it:
 * BSN/BIB, FSN/FIB, LI, SIO + SIF (or the LSSU status), two FCS octets
 * (Q.703 2.2, Q.704 2.2, Q.763 1.2). */
static struct su_info decode_su(const unsigned char *b, int len, int tx)
{
	struct su_info info = {0, -1, -1, -1};
	const char *dir = tx ? "wire_tx" : "wire_rx";
	int li, rl, plen, i;
	unsigned int dpc, opcv, sls;
	const unsigned char *p;
	const char *name = NULL;
	char nbuf[16];

	if (len < 5) {
		return info;
	}
	li = b[2] & 0x3f;
	if (li == 0) {
		return info; /* FISU */
	}
	if (li <= 2) {
		static const char *lssu[] = {"SIO", "SIN", "SIE", "SIOS", "SIPO", "SIB", "LSSU6", "LSSU7"};
		int st = b[3] & 7;
		if (opt.wire && last_lssu[tx] != st) {
			jbegin(dir, lssu[st]);
			jend();
		}
		last_lssu[tx] = st;
		return info;
	}
	last_lssu[tx] = -1;
	info.is_msu = 1;
	info.si = b[3] & 0x0f;
	rl = opt.variant == SS7_ITU ? 4 : 7;
	plen = len - 4 - rl - 2;
	if (plen < 1) {
		return info;
	}
	p = b + 4;
	if (opt.variant == SS7_ITU) {
		dpc = p[0] | ((p[1] & 0x3f) << 8);
		opcv = (p[1] >> 6) | (p[2] << 2) | ((p[3] & 0x0f) << 10);
		sls = p[3] >> 4;
	} else {
		dpc = p[0] | (p[1] << 8) | (p[2] << 16);
		opcv = p[3] | (p[4] << 8) | (p[5] << 16);
		sls = p[6];
	}
	p += rl;
	if (info.si == 5 && plen >= 3) {
		info.cic = p[0] | ((p[1] & (opt.variant == SS7_ITU ? 0x0f : 0x3f)) << 8);
		info.isup_type = p[2];
		name = isup_name(p[2]);
	} else if (info.si <= 2) {
		name = snm_name(info.si, p[0]);
	}
	if (!name) {
		snprintf(nbuf, sizeof(nbuf), "SI%d_%02x", info.si, info.si == 5 && plen >= 3 ? p[2] : p[0]);
		name = nbuf;
	}
	if (tx) {
		counter(name)->wire_tx++;
	} else {
		counter(name)->wire_rx++;
	}
	if (!opt.wire) {
		return info;
	}
	jbegin(dir, name);
	jint("si", info.si);
	jint("ni", b[3] >> 6);
	jint("opc", opcv);
	jint("dpc", dpc);
	jint("sls", sls);
	if (info.cic >= 0) {
		jint("cic", info.cic);
	}
	japp(",\"hex\":\"");
	for (i = 3; i < len - 2; i++) {
		japp("%02x", b[i]);
	}
	japp("\"");
	jend();
	return info;
}

static int ext_fd = -1, lib_fd = -1, relay_fd = -1;

static void release_held(void)
{
	int i;

	for (i = 0; i < nheld; i++) {
		if (write(relay_fd, held[i], (size_t)held_len[i]) < 0) {
			jbegin("log", "error");
			jstr("text", strerror(errno));
			jend();
		}
		free(held[i]);
	}
	if (nheld) {
		jbegin("local", "GLARE_RELEASED");
		jint("cic", glare_cic);
		jint("held", nheld);
		jend();
	}
	nheld = 0;
	glare_holding = 0;
	glare_cic = 0;
}

static void start_exit(const char *reason, int code, int linger)
{
	if (!exit_reason) {
		exit_reason = reason;
		exit_code = code;
		exit_at = now_ms() + linger;
	}
}

/* relay_in moves one datagram from the real socket to libss7. */
static void relay_in(void)
{
	unsigned char buf[1024];
	ssize_t n = read(ext_fd, buf, sizeof(buf));
	struct su_info info;

	if (n == 0) {
		local_event("LINK_CLOSED", NULL);
		start_exit("link_closed", 0, 0);
		return;
	}
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR) {
			local_event("LINK_ERROR", strerror(errno));
			start_exit("link_error", 1, 0);
		}
		return;
	}
	info = decode_su(buf, (int)n, 0);
	if (glare_cic && !glare_holding && info.si == 5 && info.isup_type == 0x01 && info.cic == glare_cic) {
		struct circuit *ci = find_circuit(glare_cic);
		glare_holding = 1;
		jbegin("local", "GLARE_HOLD");
		jint("cic", glare_cic);
		jend();
		if (ci && ci->state == C_IDLE) {
			place_call(ci, glare_called, glare_calling);
		}
	}
	if (glare_holding && nheld < HELD_MAX) {
		held[nheld] = malloc((size_t)n);
		if (held[nheld]) {
			memcpy(held[nheld], buf, (size_t)n);
			held_len[nheld++] = (int)n;
			return;
		}
	}
	if (write(relay_fd, buf, (size_t)n) < 0) {
		local_event("RELAY_ERROR", strerror(errno));
	}
}

/* relay_out moves one datagram from libss7 to the real socket. */
static void relay_out(void)
{
	unsigned char buf[1024];
	ssize_t n = read(relay_fd, buf, sizeof(buf));
	struct su_info info;

	if (n <= 0) {
		return;
	}
	info = decode_su(buf, (int)n, 1);
	if (write(ext_fd, buf, (size_t)n) < 0) {
		if (errno == EPIPE || errno == ECONNRESET) {
			local_event("LINK_CLOSED", NULL);
			start_exit("link_closed", 0, 0);
		} else {
			local_event("LINK_ERROR", strerror(errno));
		}
		return;
	}
	if (glare_holding && info.si == 5 && info.isup_type == 0x01 && info.cic == glare_cic) {
		release_held();
	}
}

/* ------------------------------------------------------------------ */
/* script mode                                                          */

static int parse_int(const char *s, int *v)
{
	char *end;
	long x;

	if (!s) {
		return -1;
	}
	errno = 0;
	x = strtol(s, &end, 0);
	if (errno || *end || end == s) {
		return -1;
	}
	*v = (int)x;
	return 0;
}

static void script_error(const char *line, const char *why)
{
	jbegin("local", "SCRIPT_ERROR");
	jstr("line", line);
	jstr("error", why);
	jend();
}

static struct circuit *script_circuit(const char *line, const char *arg)
{
	int cic;
	struct circuit *ci;

	if (parse_int(arg, &cic) < 0) {
		script_error(line, "bad CIC");
		return NULL;
	}
	ci = find_circuit(cic);
	if (!ci) {
		script_error(line, "CIC outside the range");
	}
	return ci;
}

static void group_block(const char *line, char **a, int n, int block)
{
	unsigned char status[256];
	struct circuit *ci;
	int range, type = 0, i, cic;
	struct isup_call *c;

	if (n < 3 || !(ci = script_circuit(line, a[1])) || parse_int(a[2], &range) < 0 || range < 1 ||
		range > 31) {
		script_error(line, "usage: cgb|cgu CIC RANGE(1-31) [hw]");
		return;
	}
	if (n > 3 && !strcmp(a[3], "hw")) {
		type = 1;
	}
	for (i = 0; i <= range; i++) {
		status[i] = find_circuit(ci->cic + i) ? 1 : 0;
	}
	c = call_for(ci, 0);
	if (!c) {
		return;
	}
	if ((block ? isup_cgb(ss7, c, ci->cic + range, status, type)
		   : isup_cgu(ss7, c, ci->cic + range, status, type)) < 0) {
		ci->call = NULL;
		script_error(line, "libss7 refused");
		return;
	}
	ev("tx", block ? "CGB" : "CGU", ci->cic);
	jint("range", range);
	jint("type", type);
	jstatus("status", status, range + 1);
	jend();
	for (i = 0, cic = ci->cic; i <= range; i++, cic++) {
		struct circuit *x = find_circuit(cic);
		if (!x) {
			continue;
		}
		if (type) {
			x->lblk_h = block;
			/* Q.764 2.9.2.3: hardware blocking releases calls */
			if (block && x->state != C_IDLE && x != ci) {
				jbegin("local", "CALL_CLEARED");
				jint("cic", cic);
				jend();
				if (x->call) {
					drop_call(x);
				}
			}
		} else {
			x->lblk_m = block;
		}
	}
}

static void run_command(char *line)
{
	char copy[512], *a[8], *save = NULL, *tok;
	int n = 0, v;
	struct circuit *ci;

	snprintf(copy, sizeof(copy), "%s", line);
	for (tok = strtok_r(copy, " \t", &save); tok && n < 8; tok = strtok_r(NULL, " \t", &save)) {
		a[n++] = tok;
	}
	if (!n || a[0][0] == '#') {
		return;
	}
	jbegin("local", "CMD");
	jstr("text", line);
	jend();

	if (!strcmp(a[0], "wait")) {
		if (n < 2 || parse_int(a[1], &v) < 0) {
			script_error(line, "usage: wait MS");
			return;
		}
		script_wait_until = now_ms() + v;
	} else if (!strcmp(a[0], "echo")) {
		const char *text = strchr(line, ' ');
		local_event("ECHO", text ? text + 1 : "");
	} else if (!strcmp(a[0], "quit") || !strcmp(a[0], "exit")) {
		start_exit("quit", 0, opt.linger);
	} else if (!strcmp(a[0], "blo") || !strcmp(a[0], "ubl")) {
		int blo = !strcmp(a[0], "blo");
		if (n < 2 || !(ci = script_circuit(line, a[1]))) {
			return;
		}
		if (!call_for(ci, 0) || (blo ? isup_blo(ss7, ci->call) : isup_ubl(ss7, ci->call)) < 0) {
			ci->call = NULL;
			script_error(line, "libss7 refused");
			return;
		}
		ci->lblk_m = blo;
		tx_simple(blo ? "BLO" : "UBL", ci);
	} else if (!strcmp(a[0], "cgb") || !strcmp(a[0], "cgu")) {
		group_block(line, a, n, !strcmp(a[0], "cgb"));
	} else if (!strcmp(a[0], "rsc")) {
		if (n < 2 || !(ci = script_circuit(line, a[1]))) {
			return;
		}
		clear_circuit(ci);
		if (ci->call) {
			isup_clear_callflags(ss7, ci->call, ISUP_CALL_CONNECTED | ISUP_CALL_PENDING | ISUP_SENT_REL);
		}
		if (!call_for(ci, 0) || isup_rsc(ss7, ci->call) < 0) {
			ci->call = NULL;
			script_error(line, "libss7 refused");
			return;
		}
		ci->state = C_RELEASING;
		tx_simple("RSC", ci);
	} else if (!strcmp(a[0], "grs")) {
		if (n < 3 || !(ci = script_circuit(line, a[1])) || parse_int(a[2], &v) < 0 || v < 1 || v > 31) {
			script_error(line, "usage: grs CIC RANGE(1-31)");
			return;
		}
		send_grs(ci->cic, v);
	} else if (!strcmp(a[0], "call") || !strcmp(a[0], "glare")) {
		if (n < 3) {
			script_error(line, "usage: call CIC|any CALLED [CALLING]");
			return;
		}
		if (!strcmp(a[1], "any")) {
			ci = pick_free_circuit();
			if (!ci) {
				script_error(line, "no free circuit");
				return;
			}
		} else if (!(ci = script_circuit(line, a[1]))) {
			return;
		}
		if (!strcmp(a[0], "glare")) {
			glare_cic = ci->cic;
			glare_deadline = now_ms() + 10000;
			snprintf(glare_called, sizeof(glare_called), "%s", a[2]);
			snprintf(glare_calling, sizeof(glare_calling), "%s", n > 3 ? a[3] : opt.calling);
			jbegin("local", "GLARE_ARMED");
			jint("cic", ci->cic);
			jend();
			return;
		}
		if (ci->state != C_IDLE) {
			script_error(line, "circuit busy");
			return;
		}
		place_call(ci, a[2], n > 3 ? a[3] : opt.calling);
	} else if (!strcmp(a[0], "rel")) {
		int cause = opt.release_cause;
		if (n < 2 || !(ci = script_circuit(line, a[1]))) {
			return;
		}
		if (n > 2 && parse_int(a[2], &cause) < 0) {
			script_error(line, "bad cause");
			return;
		}
		if (send_rel(ci, cause) < 0) {
			script_error(line, "no call on the circuit");
		}
	} else if (!strcmp(a[0], "acm") || !strcmp(a[0], "anm")) {
		if (n < 2 || !(ci = script_circuit(line, a[1]))) {
			return;
		}
		ci->due = 0;
		if ((!strcmp(a[0], "acm") ? send_acm(ci) : send_anm(ci)) < 0) {
			script_error(line, "no call on the circuit");
		}
	} else if (!strcmp(a[0], "cpg")) {
		int event = CPG_EVENT_ALERTING;
		if (n < 2 || !(ci = script_circuit(line, a[1]))) {
			return;
		}
		if (n > 2 && parse_int(a[2], &event) < 0) {
			script_error(line, "bad event");
			return;
		}
		if (!ci->call || isup_cpg(ss7, ci->call, event) < 0) {
			script_error(line, "no call on the circuit");
			return;
		}
		ev("tx", "CPG", ci->cic);
		jint("event", event);
		jend();
	} else if (!strcmp(a[0], "sus") || !strcmp(a[0], "res")) {
		int sus = !strcmp(a[0], "sus"), net = 0;
		if (n < 2 || !(ci = script_circuit(line, a[1]))) {
			return;
		}
		if (n > 2 && !strcmp(a[2], "net")) {
			net = 1;
		}
		if (!ci->call || (sus ? isup_sus(ss7, ci->call, (unsigned char)net)
				      : isup_res(ss7, ci->call, (unsigned char)net)) < 0) {
			script_error(line, "no call on the circuit");
			return;
		}
		ev("tx", sus ? "SUS" : "RES", ci->cic);
		jint("network", net);
		jend();
	} else if (!strcmp(a[0], "ucic")) {
		if (n < 2 || parse_int(a[1], &v) < 0) {
			script_error(line, "usage: ucic CIC");
			return;
		}
		isup_ucic(ss7, v, opt.dpc);
		ev("tx", "UCIC", v);
		jend();
	} else if (!strcmp(a[0], "autoanswer")) {
		if (n < 2) {
			script_error(line, "usage: autoanswer on|acm|off|reject CAUSE");
		} else if (!strcmp(a[1], "on")) {
			opt.answer = ANS_FULL;
		} else if (!strcmp(a[1], "acm")) {
			opt.answer = ANS_ACM_ONLY;
		} else if (!strcmp(a[1], "off")) {
			opt.answer = ANS_NONE;
		} else if (!strcmp(a[1], "reject") && n > 2 && parse_int(a[2], &v) == 0) {
			opt.answer = ANS_REJECT;
			opt.reject_cause = v;
		} else {
			script_error(line, "usage: autoanswer on|acm|off|reject CAUSE");
		}
	} else if (!strcmp(a[0], "hold")) {
		if (n < 2 || parse_int(a[1], &v) < 0) {
			script_error(line, "usage: hold MS");
			return;
		}
		opt.hold = v;
	} else if (!strcmp(a[0], "status")) {
		int i;
		for (i = 0; i < ncircuits; i++) {
			ci = &circuits[i];
			jbegin("local", "STATUS");
			jint("cic", ci->cic);
			jint("state", ci->state);
			jint("cqr", circuit_state(ci->cic));
			jint("lblk_m", ci->lblk_m);
			jint("lblk_h", ci->lblk_h);
			jint("rblk_m", ci->rblk_m);
			jint("rblk_h", ci->rblk_h);
			jint("has_call", ci->call != NULL);
			jend();
		}
	} else {
		script_error(line, "unknown command");
	}
}

static void script_step(void)
{
	char *nl;

	while (ready && !exit_reason && now_ms() >= script_wait_until) {
		nl = memchr(script_buf, '\n', (size_t)script_len);
		if (!nl) {
			if (script_eof && script_len) {
				script_buf[script_len] = 0;
				script_len = 0;
				run_command(script_buf);
				continue;
			}
			if (script_eof) {
				local_event("SCRIPT_EOF", NULL);
				start_exit("eof", 0, opt.linger);
			}
			return;
		}
		*nl = 0;
		{
			char line[sizeof(script_buf)];
			int used = (int)(nl - script_buf) + 1;
			snprintf(line, sizeof(line), "%s", script_buf);
			memmove(script_buf, nl + 1, (size_t)(script_len - used));
			script_len -= used;
			if (line[0] && line[strlen(line) - 1] == '\r') {
				line[strlen(line) - 1] = 0;
			}
			run_command(line);
		}
	}
}

static void script_read(void)
{
	ssize_t n;

	if (script_len >= (int)sizeof(script_buf) - 1) {
		return;
	}
	n = read(script_fd, script_buf + script_len, sizeof(script_buf) - 1 - (size_t)script_len);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			script_eof = 1;
		}
		return;
	}
	script_len += (int)n;
}

/* ------------------------------------------------------------------ */
/* timers of this program                                               */

static void run_due(void)
{
	long long now = now_ms();
	int i;

	for (i = 0; i < ncircuits; i++) {
		struct circuit *ci = &circuits[i];
		enum action a = ci->due_action;

		if (!ci->due || ci->due > now) {
			continue;
		}
		ci->due = 0;
		ci->due_action = A_NONE;
		switch (a) {
		case A_ACM:
			if (ci->state != C_IN_IAM || send_acm(ci) < 0) {
				break;
			}
			if (opt.answer == ANS_FULL) {
				ci->due = now + opt.anm_delay;
				if (!ci->due) {
					ci->due = 1;
				}
				ci->due_action = A_ANM;
			}
			break;
		case A_ANM:
			if (ci->state != C_IN_ACM || send_anm(ci) < 0) {
				break;
			}
			if (opt.hold > 0) {
				ci->due = now + opt.hold;
				ci->due_action = A_REL;
				ci->due_cause = opt.release_cause;
			}
			break;
		case A_REL:
			if (ci->state != C_IDLE && ci->state != C_RELEASING) {
				send_rel(ci, ci->due_cause ? ci->due_cause : opt.release_cause);
			}
			break;
		case A_NONE:
			break;
		}
	}
}

static void originate_step(void)
{
	long long now = now_ms();

	if (opt.mode != MODE_ORIGINATE || !ready || exit_reason) {
		return;
	}
	while (orig_started < opt.orig_n && now >= orig_next_ms) {
		struct circuit *ci = pick_free_circuit();
		if (!ci) {
			break;
		}
		if (!orig_first_ms) {
			orig_first_ms = now;
			orig_next_ms = now;
		}
		orig_started++;
		if (place_call(ci, opt.called, opt.calling) == 0) {
			ci->originated = 1;
			orig_active++;
		} else {
			orig_failed++;
		}
		orig_next_ms += opt.orig_rate > 0 ? (long long)(1000.0 / opt.orig_rate) : 0;
	}
	if (!done_emitted && orig_started == opt.orig_n && orig_active <= 0) {
		long long ms = (orig_last_ms ? orig_last_ms : now) - orig_first_ms;
		done_emitted = 1;
		jbegin("local", "DONE");
		jint("calls", opt.orig_n);
		jint("answered", orig_answered);
		jint("completed", orig_completed);
		jint("failed", orig_failed);
		jint("repeats", orig_repeats);
		jint("ms", ms);
		jend();
		if (!opt.stay) {
			start_exit("done", 0, opt.linger); /* DONE carries the counts */
		}
	}
}

static void check_ready(void)
{
	if (!ready && link_up && grs_pending <= 0 && (!opt.await_grs || grs_received)) {
		ready = 1;
		local_event("READY", NULL);
	}
}

static int poll_timeout(void)
{
	long long now = now_ms(), next = now + 1000, t;
	struct timeval *tv = ss7_schedule_next(ss7);
	int i;

	if (tv) {
		struct timeval cur;
		gettimeofday(&cur, NULL);
		t = now + (tv->tv_sec - cur.tv_sec) * 1000 + (tv->tv_usec - cur.tv_usec) / 1000;
		if (t < next) {
			next = t;
		}
	}
	for (i = 0; i < ncircuits; i++) {
		if (circuits[i].due && circuits[i].due < next) {
			next = circuits[i].due;
		}
	}
	if (opt.mode == MODE_ORIGINATE && ready && orig_started < opt.orig_n && orig_next_ms < next) {
		next = orig_next_ms;
	}
	if (script_wait_until > now && script_wait_until < next) {
		next = script_wait_until;
	}
	if (glare_cic && glare_deadline < next) {
		next = glare_deadline;
	}
	if (exit_reason && exit_at < next) {
		next = exit_at;
	}
	if (next <= now) {
		return 0;
	}
	return (int)(next - now);
}

/* ------------------------------------------------------------------ */
/* set-up                                                               */

static void usage(void)
{
	fprintf(stderr,
		"usage: farend [options] answer | originate N RATE | script FILE|-\n"
		"  --variant itu|ansi      ISUP and MTP3 variant (itu)\n"
		"  --opc PC --dpc PC       own and adjacent point code (ITU: number or 3-8-3;\n"
		"                          ANSI: number or network-cluster-member)\n"
		"  --slc N                 signalling link code (0)\n"
		"  --ni int|nat|spare|natspare|N  network indicator (nat)\n"
		"  --cics FIRST-LAST       circuit range (1-31)\n"
		"  --fd N | --connect PATH | --listen PATH\n"
		"                          AF_UNIX SOCK_SEQPACKET socket carrying MTP2 signal units\n"
		"  --called D --calling D  digits for originated calls (1234, 5678)\n"
		"  --called-nai N --calling-nai N  nature of address (3 national)\n"
		"  --answer full|acm|none|reject  incoming call policy (full)\n"
		"  --reject-cause N        cause for --answer reject (17)\n"
		"  --acm-delay MS --anm-delay MS  answer delays (0)\n"
		"  --cpg                   send CPG (alerting) after ACM\n"
		"  --hold MS               release answered calls after MS (0: originate\n"
		"                          releases at once, answer waits for the far end)\n"
		"  --cause N               release cause (16)\n"
		"  --no-grs                do not send GRS when the link comes up\n"
		"  --await-grs             READY also waits for the far end's GRS\n"
		"  --isup-timer tN=MS      set an ISUP timer (repeatable)\n"
		"  --mtp3-timer NAME=MS    set an MTP3 timer (repeatable)\n"
		"  --wire                  log every LSSU and MSU crossing the socket\n"
		"  --debug                 libss7 debug output (as log lines)\n"
		"  --stay                  originate: keep running after DONE\n"
		"  --linger MS             keep running MS before exiting (200)\n");
	exit(2);
}

static unsigned int parse_pc(const char *s)
{
	unsigned int a, b, c;
	char *end;

	if (sscanf(s, "%u-%u-%u", &a, &b, &c) == 3) {
		if (opt.variant == SS7_ITU) {
			return ((a & 7) << 11) | ((b & 0xff) << 3) | (c & 7);
		}
		return ((a & 0xff) << 16) | ((b & 0xff) << 8) | (c & 0xff);
	}
	a = (unsigned int)strtoul(s, &end, 0);
	if (*end) {
		fprintf(stderr, "farend: bad point code %s\n", s);
		exit(2);
	}
	return a;
}

struct timer_setting {
	char name[16];
	int ms;
};

static void set_timer_list(struct timer_setting *t, int n, int isup)
{
	int i;

	for (i = 0; i < n; i++) {
		int ok = isup ? ss7_set_isup_timer(ss7, t[i].name, t[i].ms)
			      : ss7_set_mtp3_timer(ss7, t[i].name, t[i].ms);
		if (!ok) {
			fprintf(stderr, "farend: unknown %s timer %s\n", isup ? "ISUP" : "MTP3", t[i].name);
			exit(2);
		}
	}
}

static int parse_timer(const char *s, struct timer_setting *t)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s || (size_t)(eq - s) >= sizeof(t->name)) {
		return -1;
	}
	memcpy(t->name, s, (size_t)(eq - s));
	t->name[eq - s] = 0;
	return parse_int(eq + 1, &t->ms);
}

static int open_socket(void)
{
	struct sockaddr_un sa;
	int fd;

	if (opt.fd >= 0) {
		return opt.fd;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (opt.connect_path) {
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", opt.connect_path);
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			local_event("SOCKET_ERROR", strerror(errno));
			exit(1);
		}
		return fd;
	}
	if (opt.listen_path) {
		int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", opt.listen_path);
		unlink(opt.listen_path);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0) {
			local_event("SOCKET_ERROR", strerror(errno));
			exit(1);
		}
		jbegin("local", "LISTENING");
		jstr("path", opt.listen_path);
		jend();
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			local_event("SOCKET_ERROR", strerror(errno));
			exit(1);
		}
		close(lfd);
		unlink(opt.listen_path);
		return fd;
	}
	fprintf(stderr, "farend: one of --fd, --connect, --listen is needed\n");
	exit(2);
}

static void on_signal(int sig)
{
	int saved = errno;

	got_signal = sig;
	if (sigpipe[1] >= 0 && write(sigpipe[1], "x", 1) < 0) {
		/* nothing to do: the flag is set */
	}
	errno = saved;
}

static void emit_exit(void)
{
	int i;

	jbegin("local", "EXIT");
	jstr("reason", exit_reason ? exit_reason : "unknown");
	jint("errors", errors_logged);
	jint("unexpected", unexpected_logged);
	japp(",\"rx\":{");
	for (i = 0; i < ncounters; i++) {
		japp("%s\"%s\":%d", i ? "," : "", counters[i].name, counters[i].rx);
	}
	japp("},\"tx\":{");
	for (i = 0; i < ncounters; i++) {
		japp("%s\"%s\":%d", i ? "," : "", counters[i].name, counters[i].tx);
	}
	japp("},\"wire_rx\":{");
	for (i = 0; i < ncounters; i++) {
		japp("%s\"%s\":%d", i ? "," : "", counters[i].name, counters[i].wire_rx);
	}
	japp("},\"wire_tx\":{");
	for (i = 0; i < ncounters; i++) {
		japp("%s\"%s\":%d", i ? "," : "", counters[i].name, counters[i].wire_tx);
	}
	japp("}");
	jend();
}

int main(int argc, char **argv)
{
	struct timer_setting isup_timers[32], mtp3_timers[32], ts;
	int n_isup = 0, n_mtp3 = 0, i, pairs[2];
	const char *opc_s = NULL, *dpc_s = NULL;
	struct sigaction sa;

	/* Q.764 table A.1 / Q.704 16.8 / Q.707 5.5 values, shortest where a range is given
	 * for the repeat timers, so a lost acknowledgement shows within a test. */
	static const struct timer_setting isup_defaults[] = {
		{"t1", 15000}, {"t2", 180000}, {"t5", 300000}, {"t6", 60000}, {"t7", 25000},
		{"t8", 12000}, {"t12", 15000}, {"t13", 300000}, {"t14", 15000}, {"t15", 300000},
		{"t16", 15000}, {"t17", 300000}, {"t18", 15000}, {"t19", 300000}, {"t20", 15000},
		{"t21", 300000}, {"t22", 15000}, {"t23", 300000}, {"t27", 240000}, {"t33", 14000},
		{"t35", 15000},
	};
	static const struct timer_setting mtp3_defaults[] = {
		{"t1", 800}, {"t2", 1400}, {"t3", 800}, {"t4", 800}, {"t5", 800}, {"t6", 800},
		{"t7", 1500}, {"t10", 45000}, {"t12", 1200}, {"t13", 1200}, {"t14", 3000},
		{"t19", 68000}, {"t21", 64000}, {"t22", 300000}, {"t23", 300000},
		{"q707_t1", 8000}, {"q707_t2", 60000},
	};

	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	t0 = now_ms();

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG() do { if (!v) usage(); i++; } while (0)
		if (!strcmp(a, "--variant")) {
			NEED_ARG();
			if (!strcasecmp(v, "itu")) {
				opt.variant = SS7_ITU;
			} else if (!strcasecmp(v, "ansi")) {
				opt.variant = SS7_ANSI;
			} else {
				usage();
			}
		} else if (!strcmp(a, "--opc")) {
			NEED_ARG();
			opc_s = v;
		} else if (!strcmp(a, "--dpc")) {
			NEED_ARG();
			dpc_s = v;
		} else if (!strcmp(a, "--slc")) {
			NEED_ARG();
			if (parse_int(v, &opt.slc) < 0) usage();
		} else if (!strcmp(a, "--ni")) {
			NEED_ARG();
			if (!strcmp(v, "int")) opt.ni = SS7_NI_INT;
			else if (!strcmp(v, "spare")) opt.ni = SS7_NI_INT_SPARE;
			else if (!strcmp(v, "nat")) opt.ni = SS7_NI_NAT;
			else if (!strcmp(v, "natspare")) opt.ni = SS7_NI_NAT_SPARE;
			else if (parse_int(v, &opt.ni) < 0 || opt.ni < 0 || opt.ni > 3) usage();
		} else if (!strcmp(a, "--cics")) {
			NEED_ARG();
			if (sscanf(v, "%d-%d", &opt.cic_first, &opt.cic_last) != 2 || opt.cic_first < 0 ||
				opt.cic_last < opt.cic_first || opt.cic_last > 16383) {
				usage();
			}
		} else if (!strcmp(a, "--fd")) {
			NEED_ARG();
			if (parse_int(v, &opt.fd) < 0) usage();
		} else if (!strcmp(a, "--connect")) {
			NEED_ARG();
			opt.connect_path = v;
		} else if (!strcmp(a, "--listen")) {
			NEED_ARG();
			opt.listen_path = v;
		} else if (!strcmp(a, "--called")) {
			NEED_ARG();
			opt.called = v;
		} else if (!strcmp(a, "--calling")) {
			NEED_ARG();
			opt.calling = v;
		} else if (!strcmp(a, "--called-nai")) {
			NEED_ARG();
			if (parse_int(v, &opt.called_nai) < 0) usage();
		} else if (!strcmp(a, "--calling-nai")) {
			NEED_ARG();
			if (parse_int(v, &opt.calling_nai) < 0) usage();
		} else if (!strcmp(a, "--answer")) {
			NEED_ARG();
			if (!strcmp(v, "full")) opt.answer = ANS_FULL;
			else if (!strcmp(v, "acm")) opt.answer = ANS_ACM_ONLY;
			else if (!strcmp(v, "none")) opt.answer = ANS_NONE;
			else if (!strcmp(v, "reject")) opt.answer = ANS_REJECT;
			else usage();
		} else if (!strcmp(a, "--reject-cause")) {
			NEED_ARG();
			if (parse_int(v, &opt.reject_cause) < 0) usage();
		} else if (!strcmp(a, "--acm-delay")) {
			NEED_ARG();
			if (parse_int(v, &opt.acm_delay) < 0) usage();
		} else if (!strcmp(a, "--anm-delay")) {
			NEED_ARG();
			if (parse_int(v, &opt.anm_delay) < 0) usage();
		} else if (!strcmp(a, "--hold")) {
			NEED_ARG();
			if (parse_int(v, &opt.hold) < 0) usage();
		} else if (!strcmp(a, "--cause")) {
			NEED_ARG();
			if (parse_int(v, &opt.release_cause) < 0) usage();
		} else if (!strcmp(a, "--cpg")) {
			opt.cpg = 1;
		} else if (!strcmp(a, "--no-grs")) {
			opt.grs = 0;
		} else if (!strcmp(a, "--await-grs")) {
			opt.await_grs = 1;
		} else if (!strcmp(a, "--isup-timer") || !strcmp(a, "--mtp3-timer")) {
			NEED_ARG();
			if (parse_timer(v, &ts) < 0) usage();
			if (a[2] == 'i' && n_isup < 32) isup_timers[n_isup++] = ts;
			else if (a[2] == 'm' && n_mtp3 < 32) mtp3_timers[n_mtp3++] = ts;
		} else if (!strcmp(a, "--wire")) {
			opt.wire = 1;
		} else if (!strcmp(a, "--debug")) {
			opt.debug = 1;
		} else if (!strcmp(a, "--stay")) {
			opt.stay = 1;
		} else if (!strcmp(a, "--linger")) {
			NEED_ARG();
			if (parse_int(v, &opt.linger) < 0) usage();
		} else if (!strcmp(a, "answer")) {
			opt.mode = MODE_ANSWER;
		} else if (!strcmp(a, "originate")) {
			if (i + 2 >= argc || parse_int(argv[i + 1], &opt.orig_n) < 0) usage();
			opt.orig_rate = strtod(argv[i + 2], NULL);
			opt.mode = MODE_ORIGINATE;
			i += 2;
		} else if (!strcmp(a, "script")) {
			NEED_ARG();
			opt.mode = MODE_SCRIPT;
			opt.script_path = v;
		} else {
			usage();
		}
#undef NEED_ARG
	}
	if (!opc_s || !dpc_s) {
		usage();
	}
	opt.opc = parse_pc(opc_s);
	opt.dpc = parse_pc(dpc_s);

	ncircuits = opt.cic_last - opt.cic_first + 1;
	circuits = calloc((size_t)ncircuits, sizeof(*circuits));
	if (!circuits) {
		return 1;
	}
	for (i = 0; i < ncircuits; i++) {
		circuits[i].cic = opt.cic_first + i;
	}

	if (pipe2(sigpipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (opt.mode == MODE_SCRIPT) {
		if (!strcmp(opt.script_path, "-")) {
			script_fd = 0;
		} else if ((script_fd = open(opt.script_path, O_RDONLY | O_CLOEXEC)) < 0) {
			fprintf(stderr, "farend: %s: %s\n", opt.script_path, strerror(errno));
			return 2;
		}
		/* no auto-answer surprises unless asked: script mode answers too,
		 * so a script can receive calls; "autoanswer off" stops it. */
	}

	ss7_set_message(cb_message);
	ss7_set_error(cb_error);
	ss7_set_hangup(cb_hangup);
	ss7_set_call_null(cb_call_null);
	ss7_set_notinservice(cb_notinservice);

	ss7 = ss7_new(opt.variant);
	if (!ss7) {
		fprintf(stderr, "farend: ss7_new failed\n");
		return 1;
	}
	ss7_set_debug(ss7, opt.debug ? (SS7_DEBUG_MTP2 | SS7_DEBUG_MTP3 | SS7_DEBUG_ISUP) : 0);
	ss7_set_network_ind(ss7, opt.ni);
	ss7_set_pc(ss7, opt.opc);
	/* libss7.h declares ss7_set_default_dpc, but libss7 2.0.0 does not define it */
	/* every ISUP and MTP3 timer is off after ss7_new until set */
	setting_up = 1;
	set_timer_list((struct timer_setting *)isup_defaults, (int)(sizeof(isup_defaults) / sizeof(isup_defaults[0])), 1);
	set_timer_list((struct timer_setting *)mtp3_defaults, (int)(sizeof(mtp3_defaults) / sizeof(mtp3_defaults[0])), 0);
	set_timer_list(isup_timers, n_isup, 1);
	set_timer_list(mtp3_timers, n_mtp3, 0);
	setting_up = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pairs) < 0) {
		perror("socketpair");
		return 1;
	}
	lib_fd = pairs[0];
	relay_fd = pairs[1];
	if (ss7_add_link(ss7, SS7_TRANSPORT_DAHDIMTP2, lib_fd, opt.slc, opt.dpc) < 0) {
		fprintf(stderr, "farend: ss7_add_link failed\n");
		return 1;
	}

	jbegin("local", "START");
	jstr("variant", opt.variant == SS7_ITU ? "itu" : "ansi");
	jint("opc", opt.opc);
	jint("dpc", opt.dpc);
	jint("slc", opt.slc);
	jint("ni", opt.ni);
	jint("cic_first", opt.cic_first);
	jint("cic_last", opt.cic_last);
	jstr("libss7", ss7_get_version());
	jint("pid", getpid());
	jend();

	ext_fd = open_socket();
	fcntl(ext_fd, F_SETFD, FD_CLOEXEC);

	if (ss7_start(ss7)) {
		fprintf(stderr, "farend: ss7_start failed\n");
		return 1;
	}

	for (;;) {
		struct pollfd p[5];
		int np = 0, ip_ext, ip_lib, ip_relay, ip_sig, ip_script = -1, res;
		int timeout;

		drain_events();
		process_reevents();
		drain_events();
		check_ready();
		run_due();
		originate_step();
		if (script_fd >= 0) {
			script_step();
		}
		if (glare_cic && !glare_holding && now_ms() >= glare_deadline) {
			jbegin("local", "GLARE_TIMEOUT");
			jint("cic", glare_cic);
			jend();
			glare_cic = 0;
		}
		if (got_signal) {
			local_event("SIGNAL", got_signal == SIGTERM ? "SIGTERM" : "SIGINT");
			got_signal = 0;
			start_exit("signal", 0, 0);
		}
		if (exit_reason && now_ms() >= exit_at) {
			break;
		}

		ip_ext = np;
		p[np].fd = ext_fd;
		p[np++].events = POLLIN;
		ip_lib = np;
		p[np].fd = lib_fd;
		p[np++].events = (short)ss7_pollflags(ss7, lib_fd);
		ip_relay = np;
		p[np].fd = relay_fd;
		p[np++].events = POLLIN;
		ip_sig = np;
		p[np].fd = sigpipe[0];
		p[np++].events = POLLIN;
		if (script_fd >= 0 && !script_eof && script_len < (int)sizeof(script_buf) - 1) {
			ip_script = np;
			p[np].fd = script_fd;
			p[np++].events = POLLIN;
		}
		timeout = poll_timeout();
		res = poll(p, (nfds_t)np, timeout);
		if (res < 0) {
			if (errno == EINTR) {
				continue;
			}
			perror("poll");
			break;
		}
		ss7_schedule_run(ss7);
		if (p[ip_sig].revents) {
			char b[16];
			while (read(sigpipe[0], b, sizeof(b)) > 0) {
			}
		}
		if (p[ip_ext].revents & POLLIN) {
			relay_in();
		} else if (p[ip_ext].revents & (POLLHUP | POLLERR)) {
			local_event("LINK_CLOSED", NULL);
			start_exit("link_closed", 0, 0);
		}
		if (p[ip_lib].revents & POLLIN) {
			ss7_read(ss7, lib_fd);
			process_reevents();
			drain_events();
		}
		if (p[ip_lib].revents & POLLOUT) {
			ss7_write(ss7, lib_fd);
		}
		if (p[ip_relay].revents & POLLIN) {
			relay_out();
		}
		if (ip_script >= 0 && (p[ip_script].revents & (POLLIN | POLLHUP | POLLERR))) {
			script_read();
		}
	}

	/* An ordinary stop: say what happened, leave the link without a word. */
	if (nheld) {
		release_held();
	}
	local_event("SS7_STOP", NULL);
	emit_exit();
	close(ext_fd);
	return exit_code;
}
