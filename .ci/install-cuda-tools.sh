# Sourced by .ci/run (bash): installs NVIDIA's runtime compiler and the
# stand-alone CUDA binary tools on a Debian bookworm machine with no GPU.
#
#   - NVRTC 11.8 (libnvrtc11.2, from Debian's non-free component), which
#     ops/cuda's TestNVRTCCompilesEveryKernel and `opbench kernels` load;
#   - ptxas, nvdisasm and cuobjdump, unpacked from the nvidia-cuda-toolkit
#     .deb (apt-get download + dpkg-deb -x) into $KERNBENCH_CUDA_TOOLS
#     without the package's multi-gigabyte dependencies: they run on
#     their own.
#
# Idempotent: each step is skipped when its result is already there, so a
# second run takes well under a second. Exports KERNBENCH_CUDA_TOOLS.
# Elsewhere than Debian (no apt-get) it does nothing and says so.

kb_cuda_tools_install() {
	local tools="${KERNBENCH_CUDA_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/kernbench/cuda-tools}"
	export KERNBENCH_CUDA_TOOLS="$tools"
	local have_nvrtc=0 have_tools=0
	if ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so\.1[123]'; then have_nvrtc=1; fi
	if [ -x "$tools/usr/bin/ptxas" ] && [ -x "$tools/usr/bin/nvdisasm" ] && [ -x "$tools/usr/bin/cuobjdump" ]; then have_tools=1; fi
	if [ $have_nvrtc = 1 ] && [ $have_tools = 1 ]; then
		echo "cuda tools: NVRTC and $tools already installed"
		return 0
	fi
	if ! command -v apt-get >/dev/null; then
		echo "cuda tools: no apt-get here; install NVRTC and ptxas/nvdisasm/cuobjdump by hand" >&2
		return 0
	fi
	local sudo=""
	if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo=sudo; fi
	# NVRTC and the toolkit are in non-free (and contrib, for its helpers).
	local src=/etc/apt/sources.list.d/debian.sources
	if [ -f "$src" ] && ! grep -q '^Components:.*non-free' "$src"; then
		$sudo sed -i 's/^Components: main$/Components: main contrib non-free non-free-firmware/' "$src"
	fi
	$sudo apt-get update -qq
	# A machine with another sources layout: name the components in a list
	# file of our own.
	if ! apt-cache show libnvrtc11.2 >/dev/null 2>&1; then
		local codename
		codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
		echo "deb http://deb.debian.org/debian $codename contrib non-free" |
			$sudo tee /etc/apt/sources.list.d/kernbench-non-free.list >/dev/null
		$sudo apt-get update -qq
	fi
	if [ $have_nvrtc = 0 ]; then
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnvrtc11.2 >/dev/null
	fi
	if [ $have_tools = 0 ]; then
		local tmp
		tmp=$(mktemp -d)
		# apt-get download writes into the current folder, as _apt where it can.
		chmod 777 "$tmp"
		(cd "$tmp" && apt-get download -qq nvidia-cuda-toolkit)
		mkdir -p "$tools"
		dpkg-deb -x "$tmp"/nvidia-cuda-toolkit_*.deb "$tools"
		rm -rf "$tmp"
	fi
	echo "cuda tools: NVRTC $(ldconfig -p | grep -o 'libnvrtc\.so\.[0-9.]*' | head -1); $("$tools/usr/bin/ptxas" --version | tail -1)"
}
kb_cuda_tools_install
