package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// version and commit may be set at link time (-ldflags "-X main.version=v1.2.3
// -X main.commit=abc123") where the build has no VCS information, as in the
// container's build stage; otherwise they come from the build info.
var (
	version = ""
	commit  = ""
)

// buildInfo is what `isupgw version` prints.
type buildInfo struct {
	Version  string // module version, or "(devel)"
	Commit   string // VCS revision, "" when unknown
	Time     string // commit time
	Modified bool   // built from a tree with uncommitted changes
	Go       string // toolchain that built the binary
	Platform string
}

func readBuildInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	return buildInfoFrom(bi, ok, version, commit)
}

// buildInfoFrom merges the binary's build info with the link-time values.
func buildInfoFrom(bi *debug.BuildInfo, ok bool, linkVersion, linkCommit string) buildInfo {
	info := buildInfo{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if ok && bi != nil {
		if bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			info.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if linkVersion != "" {
		info.Version = linkVersion
	}
	if linkCommit != "" {
		info.Commit = linkCommit
	}
	return info
}

func (b buildInfo) write(w io.Writer) {
	fmt.Fprintf(w, "isupgw %s\n", b.Version)
	commit := b.Commit
	if commit == "" {
		commit = "unknown"
	}
	if b.Time != "" {
		commit += " (" + b.Time + ")"
	}
	if b.Modified {
		commit += " with uncommitted changes"
	}
	fmt.Fprintf(w, "commit %s\n", commit)
	fmt.Fprintf(w, "built with %s %s\n", b.Go, b.Platform)
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, the commit and the Go version the binary was built from (also --version)",
		Action: func(c *cli.Context) error {
			readBuildInfo().write(c.App.Writer)
			return nil
		},
	}
}
