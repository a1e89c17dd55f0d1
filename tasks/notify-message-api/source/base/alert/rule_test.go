package alert_test

import (
	"math"
	"testing"

	"notify.example/ops/alert"
)

func TestRuleValidate(t *testing.T) {
	good := alert.Rule{Metric: "cpu", Limit: 90, Owner: "oncall"}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid rule refused: %v", err)
	}
	for name, r := range map[string]alert.Rule{
		"no metric":    {Limit: 1, Owner: "oncall"},
		"no owner":     {Metric: "cpu", Limit: 1},
		"NaN limit":    {Metric: "cpu", Limit: math.NaN(), Owner: "oncall"},
		"infinite one": {Metric: "cpu", Limit: math.Inf(1), Owner: "oncall"},
	} {
		if r.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRuleExceeded(t *testing.T) {
	r := alert.Rule{Metric: "cpu", Limit: 90, Owner: "oncall"}
	for value, want := range map[float64]bool{89.9: false, 90: false, 90.1: true} {
		if got := r.Exceeded(value); got != want {
			t.Errorf("Exceeded(%v) = %v, want %v", value, got, want)
		}
	}
}

func TestNewMonitorRefusesBadRules(t *testing.T) {
	if _, err := alert.NewMonitor(nil, alert.Rule{Metric: "cpu", Limit: 1}); err == nil {
		t.Error("a rule without an owner was accepted")
	}
	r := alert.Rule{Metric: "cpu", Limit: 1, Owner: "oncall"}
	if _, err := alert.NewMonitor(nil, r, r); err == nil {
		t.Error("two rules for one metric were accepted")
	}
	m, err := alert.NewMonitor(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Firing(); len(got) != 0 {
		t.Errorf("a new monitor fires %v", got)
	}
}
