package simt

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// While a cache entry is being built the package holds SIGINT, SIGTERM
// and SIGHUP: on one, it kills the compilers running (their whole process
// groups), removes the temporary folders of the builds, cancels them, and
// raises the signal again once it has let it go, so that the process ends
// as the signal would have ended it, or, where the program handles the
// signal itself, goes on to do so. With no build left it lets the signals
// go.
var builds struct {
	sync.Mutex
	dirs   map[string]bool
	pids   map[int]bool
	ch     chan os.Signal
	ctx    context.Context
	cancel context.CancelFunc
}

// startBuild registers a build into dir and returns its context, ended
// by a signal, and the function that unregisters it.
func startBuild(dir string) (context.Context, func()) {
	builds.Lock()
	defer builds.Unlock()
	if builds.dirs == nil {
		builds.dirs, builds.pids = map[string]bool{}, map[int]bool{}
	}
	builds.dirs[dir] = true
	if builds.ch == nil {
		builds.ch = make(chan os.Signal, 1)
		builds.ctx, builds.cancel = context.WithCancel(context.Background())
		for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
			// One the process ignores (nohup) stays ignored.
			if !signal.Ignored(sig) {
				signal.Notify(builds.ch, sig)
			}
		}
		go onBuildSignal(builds.ch, builds.cancel)
	}
	ctx := builds.ctx
	return ctx, func() {
		builds.Lock()
		defer builds.Unlock()
		delete(builds.dirs, dir)
		if len(builds.dirs) == 0 && builds.ch != nil {
			signal.Stop(builds.ch)
			close(builds.ch)
			builds.cancel()
			builds.ch, builds.ctx, builds.cancel = nil, nil, nil
		}
	}
}

// trackProcess registers a running compiler, whose group a signal kills,
// and returns the function that unregisters it.
func trackProcess(pid int) func() {
	builds.Lock()
	defer builds.Unlock()
	if builds.pids == nil {
		builds.pids = map[int]bool{}
	}
	builds.pids[pid] = true
	return func() {
		builds.Lock()
		defer builds.Unlock()
		delete(builds.pids, pid)
	}
}

// onBuildSignal waits for a signal on ch and ends the builds. It raises
// the signal again while it still holds the builds (their last step,
// unregistering, waits for it), so that where nothing else handles the
// signal the process ends by it before a build returns.
func onBuildSignal(ch chan os.Signal, cancel context.CancelFunc) {
	sig, ok := <-ch
	if !ok {
		return
	}
	builds.Lock()
	defer builds.Unlock()
	cancel() // first, so that a build sees why its compiler died
	for pid := range builds.pids {
		killGroup(pid)
	}
	// The compilers are gone (SIGKILL); what a build step writes after
	// this fails for want of its folder.
	time.Sleep(50 * time.Millisecond)
	for dir := range builds.dirs {
		os.RemoveAll(dir)
	}
	signal.Stop(ch)
	if builds.ch == ch {
		builds.ch, builds.ctx, builds.cancel = nil, nil, nil
		builds.dirs = map[string]bool{}
	}
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(sig) == nil {
		// The signal ends the process unless the program handles it.
		time.Sleep(time.Second)
	}
}
