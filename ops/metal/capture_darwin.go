//go:build darwin

package metal

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/ebitengine/purego/objc"
)

// mtlCaptureDestinationGPUTraceDocument is MTLCaptureDestination's value
// for a .gputrace file.
const mtlCaptureDestinationGPUTraceDocument = 2

// startCapture starts an MTLCaptureManager capture of the device into a
// GPU trace document at path. macOS lets a process outside Xcode write
// one only with METAL_CAPTURE_ENABLED=1 in its environment (or
// MetalCaptureEnabled in its Info.plist); the error says so.
func (g *gpuDevice) startCapture(path string) (func() error, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("metal: capture: %s exists (a GPU trace document must be new)", path)
	}
	var mgr objc.ID
	var err error
	inPool(g.api, func() {
		mgr = objc.ID(objc.GetClass("MTLCaptureManager")).Send(sel("sharedCaptureManager"))
		if mgr == 0 {
			err = errors.New("metal: capture: no MTLCaptureManager")
			return
		}
		if !objc.Send[bool](mgr, sel("supportsDestination:"), int64(mtlCaptureDestinationGPUTraceDocument)) {
			err = errors.New("metal: capture: this process may not write GPU trace documents: set METAL_CAPTURE_ENABLED=1 in the environment")
			return
		}
		desc := objc.ID(objc.GetClass("MTLCaptureDescriptor")).Send(sel("alloc")).Send(sel("init"))
		defer desc.Send(sel("release"))
		desc.Send(sel("setCaptureObject:"), g.dev)
		desc.Send(sel("setDestination:"), int64(mtlCaptureDestinationGPUTraceDocument))
		url := objc.ID(objc.GetClass("NSURL")).Send(sel("fileURLWithPath:"), nsString(path))
		desc.Send(sel("setOutputURL:"), url)
		var nserr objc.ID
		if !objc.Send[bool](mgr, sel("startCaptureWithDescriptor:error:"), desc, unsafe.Pointer(&nserr)) {
			err = fmt.Errorf("metal: capture: %w", nsError(nserr))
		}
	})
	if err != nil {
		return nil, err
	}
	return func() error {
		inPool(g.api, func() { mgr.Send(sel("stopCapture")) })
		return nil
	}, nil
}
