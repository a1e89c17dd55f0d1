// Command opsnotify reads metric observations from standard input, one
// "<metric> <value>" per line, and prints the notifications they cause.
// Lines it cannot read are collected in a digest that is printed at the end.
//
//	opsnotify -owner oncall -rule cpu=90 -rule disk=0.95 < observations
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"notify.example/ops/alert"
	"notify.example/ops/digest"
	"notify.example/ops/notify"
)

type ruleFlags []alert.Rule

func (r *ruleFlags) String() string { return fmt.Sprint(len(*r), " rules") }

func (r *ruleFlags) Set(s string) error {
	metric, limit, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want metric=limit, got %q", s)
	}
	v, err := strconv.ParseFloat(limit, 64)
	if err != nil {
		return err
	}
	*r = append(*r, alert.Rule{Metric: metric, Limit: v})
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "opsnotify:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("opsnotify", flag.ContinueOnError)
	owner := fs.String("owner", "oncall", "who owns every rule")
	prefix := fs.String("prefix", "ops", "prefix for every subject")
	var rules ruleFlags
	fs.Var(&rules, "rule", "a metric=limit rule (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for i := range rules {
		rules[i].Owner = *owner
	}

	n := notify.New(notify.NewWriterTransport(out), notify.WithSubjectPrefix(*prefix))
	monitor, err := alert.NewMonitor(n, rules...)
	if err != nil {
		return err
	}
	problems := digest.New("unreadable observations", *owner)

	scanner := bufio.NewScanner(in)
	for line := 1; scanner.Scan(); line++ {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			problems.Add(fmt.Sprintf("line %d: want <metric> <value>", line))
			continue
		}
		value, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			problems.Add(fmt.Sprintf("line %d: %v", line, err))
			continue
		}
		if err := monitor.Observe(ctx, fields[0], value); err != nil {
			return err
		}
	}
	if err := scanner.Err(); err != nil {
		return err
	}
	return problems.Flush(ctx, n)
}
