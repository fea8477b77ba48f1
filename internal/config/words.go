package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/isupgw/isupgw/internal/suggest"
)

var (
	unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type config\.(\w+)$`)
	wrongTypeRE    = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$") // a backquote inside: no raw string
)

// plainWords rewrites the YAML decoder's messages, which speak of Go types,
// in the words of the configuration reference. For an unknown field it also
// returns the known field it suggests ("" for none).
func plainWords(msg string) (string, string) {
	if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
		return unknownField(m[1], m[2])
	}
	if m := wrongTypeRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("want %s, got %s", typeWords(m[3]), gotWords(m[1], m[2])), ""
	}
	return msg, ""
}

// unknownField names the known field nearest to a mistyped one, or lists
// the section's fields when none is near.
func unknownField(name, section string) (string, string) {
	known := sectionFields()[section]
	if s := suggest.Nearest(name, known); s != "" {
		return fmt.Sprintf("unknown field %q (did you mean %s?)", name, s), s
	}
	if len(known) == 0 {
		return fmt.Sprintf("unknown field %q", name), ""
	}
	return fmt.Sprintf("unknown field %q (want one of %s)", name, strings.Join(known, ", ")), ""
}

// sectionFields maps each section's Go type name to its YAML field names,
// in the order of the file's reference.
func sectionFields() map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[File]().PkgPath() {
			return
		}
		if _, seen := out[t.Name()]; seen {
			return
		}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			names = append(names, tag)
		}
		if len(names) == 0 {
			return // a value type (PointCode, Variant): not a section
		}
		out[t.Name()] = names
		for i := 0; i < t.NumField(); i++ {
			walk(t.Field(i).Type)
		}
	}
	walk(reflect.TypeFor[File]())
	return out
}

// typeWords says what a field of a Go type wants.
func typeWords(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "config."):
		return "a section (field: value lines)"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a text value"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	}
	return goType
}

// gotWords says what the file gave: a YAML tag and, for a scalar, its text.
func gotWords(tag, value string) string {
	switch tag {
	case "seq":
		return "a list"
	case "map":
		return "a section"
	case "null":
		return "nothing"
	case "str":
		return fmt.Sprintf("%q", value)
	}
	if value != "" {
		return value
	}
	return tag
}
