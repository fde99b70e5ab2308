package cudatools

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ToolDirs returns the folders a CUDA binary tool is looked for in, in
// order: $KERNBENCH_CUDA_TOOLS/usr/bin and $KERNBENCH_CUDA_TOOLS/bin (a
// toolkit .deb unpacked with dpkg-deb -x, as .ci/install-cuda-tools.sh
// does, or a toolkit folder), the same under the default
// kernbench/cuda-tools in the user cache directory, $CUDA_PATH/bin and
// /usr/local/cuda/bin. $PATH is searched after them.
func ToolDirs() []string {
	var roots []string
	if d := os.Getenv("KERNBENCH_CUDA_TOOLS"); d != "" {
		roots = append(roots, d)
	}
	if d, err := os.UserCacheDir(); err == nil {
		roots = append(roots, filepath.Join(d, "kernbench", "cuda-tools"))
	}
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, filepath.Join(r, "usr", "bin"), filepath.Join(r, "bin"))
	}
	if d := os.Getenv("CUDA_PATH"); d != "" {
		dirs = append(dirs, filepath.Join(d, "bin"))
	}
	return append(dirs, "/usr/local/cuda/bin")
}

// ErrNoTool is returned (wrapped) when a CUDA tool is not installed.
var ErrNoTool = errors.New("CUDA tool not found")

// Tool returns the path of a CUDA binary tool ("cuobjdump", "nvdisasm",
// "ptxas").
func Tool(name string) (string, error) {
	for _, d := range ToolDirs() {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: %s (looked in %v and $PATH; .ci/install-cuda-tools.sh installs it)", ErrNoTool, name, ToolDirs())
}

// DisassembleCubin returns cuobjdump -sass's listing of a cubin, for
// ParseSASS.
func DisassembleCubin(cubin []byte) (string, error) {
	tool, err := Tool("cuobjdump")
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "kernbench-*.cubin")
	if err != nil {
		return "", fmt.Errorf("cuobjdump: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(cubin); err != nil {
		f.Close()
		return "", fmt.Errorf("cuobjdump: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("cuobjdump: %w", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(tool, "-sass", f.Name())
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s -sass: %w: %s", tool, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.String(), nil
}
