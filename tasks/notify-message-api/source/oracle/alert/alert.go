// Package alert watches metric values against limits. It tells a rule's owner
// when the metric starts exceeding its limit and when it comes back.
package alert

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"

	"notify.example/ops/notify"
)

// Rule is the limit for one metric, and who owns it.
type Rule struct {
	Metric string
	Limit  float64
	Owner  string
}

// Validate reports what makes the rule unusable, if anything.
func (r Rule) Validate() error {
	switch {
	case r.Metric == "":
		return errors.New("alert: rule without a metric")
	case r.Owner == "":
		return fmt.Errorf("alert: rule for %s has no owner", r.Metric)
	case math.IsNaN(r.Limit) || math.IsInf(r.Limit, 0):
		return fmt.Errorf("alert: rule for %s has no finite limit", r.Metric)
	}
	return nil
}

// Exceeded reports whether value is over the rule's limit.
func (r Rule) Exceeded(value float64) bool {
	return value > r.Limit
}

// Monitor evaluates observations against its rules and notifies the owners.
type Monitor struct {
	mu       sync.Mutex
	notifier *notify.Notifier
	rules    map[string]Rule
	firing   map[string]bool
}

// NewMonitor returns a Monitor that notifies through n. Every rule must be
// valid, and no two rules may share a metric.
func NewMonitor(n *notify.Notifier, rules ...Rule) (*Monitor, error) {
	m := &Monitor{notifier: n, rules: make(map[string]Rule), firing: make(map[string]bool)}
	for _, r := range rules {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		if _, dup := m.rules[r.Metric]; dup {
			return nil, fmt.Errorf("alert: two rules for %s", r.Metric)
		}
		m.rules[r.Metric] = r
	}
	return m, nil
}

// Observe records value for metric. When the value takes the metric over its
// limit, the owner gets an urgent "FIRING <metric>" message; when a firing
// metric comes back to its limit or under it, a normal "RESOLVED <metric>" one.
// Either body reads "<metric> is <value> (limit <limit>)". Other observations,
// and metrics without a rule, send nothing. When the message cannot be sent
// (ctx done included), Observe returns the error and the rule keeps its state,
// so the next observation tries again.
func (m *Monitor) Observe(ctx context.Context, metric string, value float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rule, ok := m.rules[metric]
	if !ok {
		return nil
	}
	over := rule.Exceeded(value)
	if over == m.firing[metric] {
		return nil
	}
	msg := notify.Message{
		To:       rule.Owner,
		Subject:  "RESOLVED " + metric,
		Body:     fmt.Sprintf("%s is %s (limit %s)", metric, formatValue(value), formatValue(rule.Limit)),
		Priority: notify.Normal,
	}
	if over {
		msg.Subject = "FIRING " + metric
		msg.Priority = notify.Urgent
	}
	if err := m.notifier.Send(ctx, msg); err != nil {
		return err
	}
	m.firing[metric] = over
	return nil
}

// Firing returns the metrics whose rules are firing, sorted.
func (m *Monitor) Firing() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for metric, on := range m.firing {
		if on {
			out = append(out, metric)
		}
	}
	sort.Strings(out)
	return out
}

func formatValue(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
