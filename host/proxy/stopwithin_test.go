//go:build unix

package proxy_test

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/added060/palisade/host/proxy"
)

// TestStopWithin: a process that exits within the grace gets no signal, one that exits on
// SIGTERM gets that, and one that ignores SIGTERM is killed a grace later.
func TestStopWithin(t *testing.T) {
	const grace = 200 * time.Millisecond
	for _, tc := range []struct {
		name, script string
		want         syscall.Signal // 0 = exited by itself
	}{
		{"exits", "exit 0", 0},
		{"term", "sleep 30", syscall.SIGTERM},
		{"kill", "trap '' TERM; while :; do sleep 0.05; done", syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", tc.script)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var ws syscall.WaitStatus
			go func() {
				st, _ := cmd.Process.Wait()
				if st != nil {
					ws, _ = st.Sys().(syscall.WaitStatus)
				}
				close(exited)
			}()
			if tc.want != 0 {
				time.Sleep(50 * time.Millisecond) // let sh install its trap
			}
			start := time.Now()
			proxy.StopWithin(cmd, exited, grace)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Fatal("the process outlived StopWithin's SIGKILL")
			}
			took := time.Since(start)
			switch {
			case tc.want == 0 && (ws.Signaled() || took >= grace):
				t.Errorf("exited by itself: signaled=%v after %v, want no signal within %v", ws.Signaled(), took, grace)
			case tc.want != 0 && (!ws.Signaled() || ws.Signal() != tc.want):
				t.Errorf("status %v, want killed by %v", ws, tc.want)
			case tc.want == syscall.SIGKILL && took < 2*grace:
				t.Errorf("killed after %v, want a grace before SIGTERM and one before SIGKILL", took)
			}
		})
	}
}
