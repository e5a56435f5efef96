package contract

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/agtsdk/agt/internal/text"
)

// maxPlanNames bounds the tools named per line of the plan.
const maxPlanNames = 10

// maxCellBytes bounds one cell of the table and one name or message of
// JUnit; longer text is cut (text.Bound).
const maxCellBytes = 240

// WritePlan writes what a check is about to call, one line per tool, and
// the tools it skips, one line per reason.
func WritePlan(w io.Writer, p Plan) error {
	var b strings.Builder
	for _, t := range p.Tools {
		kind := "read-only"
		if !t.ReadOnly {
			kind = "NOT read-only: its cases call it for real"
		}
		fmt.Fprintf(&b, "will call %s: %d cases (%s)\n", cell(t.Name), t.Cases, kind)
	}
	// The skipped tools, one line per reason, in the order first seen.
	var reasons []string
	byReason := map[string][]string{}
	for _, s := range p.Skipped {
		if _, seen := byReason[s.Reason]; !seen {
			reasons = append(reasons, s.Reason)
		}
		byReason[s.Reason] = append(byReason[s.Reason], cell(s.Name))
	}
	for _, r := range reasons {
		names := byReason[r]
		if len(names) > maxPlanNames {
			names = append(names[:maxPlanNames:maxPlanNames], fmt.Sprintf("and %d more", len(names)-maxPlanNames))
		}
		fmt.Fprintf(&b, "skip %s: %s\n", strings.Join(names, ", "), r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTable writes the report for a person: a line per tool (cases, the
// counts of each class, time), then a line per finding (tool, case,
// class, path, schema path, message), then the notes and the verdict.
// It never writes an argument value.
func WriteTable(w io.Writer, r *Report) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tCASES\tCLASSES\tMS")
	for _, t := range r.Tools {
		classes := []string{}
		for _, c := range classOrder {
			if n := t.Classes[c]; n > 0 {
				classes = append(classes, fmt.Sprintf("%s %d", c, n))
			}
		}
		if t.NotRun > 0 {
			classes = append(classes, fmt.Sprintf("not run %d", t.NotRun))
		}
		if t.Error != "" {
			classes = append(classes, "error: "+t.Error)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\n", cell(t.Name), t.Cases, cell(strings.Join(classes, ", ")), t.DurationMS)
	}
	_ = tw.Flush()
	if len(r.Findings) > 0 {
		b.WriteString("\n")
		tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tCASE\tCLASS\tPATH\tSCHEMA PATH\tMESSAGE")
		for _, f := range r.Findings {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cell(f.Tool), cell(f.Case), f.Class, orDash(cell(f.Path)), orDash(cell(f.SchemaPath)), cell(f.Message))
		}
		_ = tw.Flush()
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", cell(n))
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", cell(r.Error))
	}
	verdict := "FAIL"
	if r.Passed() {
		verdict = "PASS"
	}
	failing := 0
	for _, f := range r.Findings {
		if f.Class.Fails() {
			failing++
		}
	}
	cases := 0
	for _, t := range r.Tools {
		cases += t.Cases
	}
	fmt.Fprintf(&b, "%s: %d tools, %d cases, %d failing findings, %d ms (seed %d, protocol %s)\n",
		verdict, len(r.Tools), cases, failing, r.DurationMS, r.Seed, orDash(r.ProtocolVersion))
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell makes a server's text fit one table cell or one JUnit name: the
// characters text.Unsafe reports (controls, line breaks, bidi overrides,
// U+2028/2029) and invalid UTF-8 become spaces, and it is bounded at
// maxCellBytes.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || text.Unsafe(r) {
			return ' '
		}
		return r
	}, text.Cut(s, maxCellBytes+1))
	return text.Bound(s, maxCellBytes)
}

// WriteJSON writes the report as one JSON document (the fields of Report).
func WriteJSON(w io.Writer, r *Report) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

// junit is the JUnit XML shape CI systems read.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fail    int          `xml:"failures,attr"`
	Errors  int          `xml:"errors,attr"`
	Time    string       `xml:"time,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Tests int         `xml:"tests,attr"`
	Fail  int         `xml:"failures,attr"`
	Error int         `xml:"errors,attr"`
	Time  string      `xml:"time,attr"`
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: a test suite per tool, a
// test case per finding (a failure when its class fails the report), one
// passing test case for the tool's agreeing cases, and an error for a
// tool that could not be checked.
func WriteJUnit(w io.Writer, r *Report) error {
	out := junitSuites{Name: cell("contract " + string(r.Reference)), Time: seconds(r.DurationMS)}
	byTool := map[string][]Finding{}
	for _, f := range r.Findings {
		byTool[f.Tool] = append(byTool[f.Tool], f)
	}
	for _, t := range r.Tools {
		name := cell(t.Name) // a server's name: hostile text
		s := junitSuite{Name: name, Time: seconds(t.DurationMS)}
		agree := t.Classes[Accepted] + t.Classes[Refused]
		s.Cases = append(s.Cases, junitCase{Name: "cases that agree with the schema", Classname: name,
			SystemOut: fmt.Sprintf("%d of %d cases: %d accepted, %d refused", agree, t.Cases, t.Classes[Accepted], t.Classes[Refused])})
		if t.Error != "" || t.NotRun > 0 {
			msg := t.Error
			if msg == "" {
				msg = fmt.Sprintf("%d cases not run", t.NotRun)
			}
			s.Cases = append(s.Cases, junitCase{Name: "tool check", Classname: name, Error: &junitFailure{Message: cell(msg), Type: "error"}})
			s.Error++
		}
		for _, f := range byTool[t.Name] {
			c := junitCase{Name: cell(f.Case), Classname: name}
			text := fmt.Sprintf("class: %s\npath: %s\nschema path: %s\n%s", f.Class, orDash(cell(f.Path)), orDash(cell(f.SchemaPath)), cell(f.Message))
			if f.Class.Fails() {
				c.Failure = &junitFailure{Message: cell(string(f.Class) + ": " + f.Message), Type: string(f.Class), Text: text}
				s.Fail++
			} else {
				c.SystemOut = text
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Fail += s.Fail
		out.Errors += s.Error
		out.Suites = append(out.Suites, s)
	}
	if r.Error != "" {
		out.Suites = append(out.Suites, junitSuite{Name: "contract", Tests: 1, Error: 1,
			Cases: []junitCase{{Name: "check", Classname: "contract", Error: &junitFailure{Message: cell(r.Error), Type: "error"}}}})
		out.Tests++
		out.Errors++
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	e := xml.NewEncoder(w)
	e.Indent("", "  ")
	if err := e.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }
