package digest_test

import (
	"testing"

	"notify.example/ops/digest"
)

func TestAddSkipsBlankEvents(t *testing.T) {
	d := digest.New("nightly", "ops")
	d.Add("  backup done ")
	d.Add("")
	d.Add(" \t ")
	d.Add("rotation done")
	if got := d.Pending(); got != 2 {
		t.Fatalf("Pending() = %d, want 2", got)
	}
}
