package adapter

import (
	"os/exec"
	"testing"
	"time"

	"github.com/go-delve/delve/service"
	"github.com/go-delve/delve/service/api"
)

// overtaken is a Delve client whose halt is answered before the
// continue it was meant to stop has resumed the target: the race a DAP
// pause sent right after configurationDone runs into.
type overtaken struct {
	service.Client
	running <-chan *api.DebuggerState
}

func (o *overtaken) Halt() (*api.DebuggerState, error) {
	st, err := o.Client.Halt()
	o.running = o.Client.Continue()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s, err := o.Client.GetStateNonBlocking(); err == nil && s.Running {
			break
		}
	}
	return st, err
}

// TestHaltOvertaken checks that a halt overtaken by a continue returns
// without waiting for that continue to stop, so that the next halt
// reaches Delve and stops it. Before, naming the first halt's state (in
// the dynamic loader, at the process's entry) asked Delve for the library
// list, which waited behind the running continue and held every later
// call: a pause right after configurationDone stopped nothing until the
// program ended.
func TestHaltOvertaken(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	dc := inProcess(t, sleep, "60")
	o := &overtaken{Client: dc}
	c, err := New(o, sleep)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer c.Close()

	halted := make(chan error, 1)
	go func() { _, err := c.Halt(); halted <- err }()
	select {
	case err := <-halted:
		if err != nil {
			t.Fatalf("Halt: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Halt did not return while a continue overtook it")
	}
	if _, err := dc.Halt(); err != nil {
		t.Fatalf("second Halt: %v", err)
	}
	select {
	case st := <-o.running:
		if st == nil || st.Running || st.Exited {
			t.Errorf("the continue ended with %+v, want a stop", st)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the second halt did not stop the continue")
	}
}
