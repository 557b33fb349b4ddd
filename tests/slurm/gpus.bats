#!/usr/bin/env bats
# GPUs in a step's root (issue 41): each node of the cluster has two generic resources
# "gpu" (GRES), character devices tests/slurm/run makes as root (cluster.bash: gpu0 with
# /dev/null's numbers, gpu1 with /dev/zero's, named by gres.conf's File=). The test's CDI
# spec, of nvidia-ctk's kind and naming (nvidia.com/gpu=0, =1), binds each as /dev/nvidiaN.
# With --gres the plugin gives a step's root exactly the GPUs Slurm allocated it
# (SLURM_STEP_GPUS), with no option; --devroot-device gives any other CDI device.

load common

setup_file() { plugin_setup_file; }
teardown_file() { http_stop; }

setup() {
	plugin_setup
	[[ -c ${CLUSTER_GPU_DIR:-}/gpu0 ]] || skip "the cluster has no GPU devices (CLUSTER_GPU_DIR)"
	mkdir -p "$T/specs" "$XDG_CONFIG_HOME/enter-devroot"
	echo "cdi-spec-dirs = $T/specs" >> "$XDG_CONFIG_HOME/enter-devroot/config"
	cat > "$T/specs/nvidia.yaml" <<EOS
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes: [{path: /dev/nvidia0, hostPath: $CLUSTER_GPU_DIR/gpu0}]
- name: "1"
  containerEdits:
    deviceNodes: [{path: /dev/nvidia1, hostPath: $CLUSTER_GPU_DIR/gpu1}]
containerEdits:
  env: [TEST_DRIVER=loaded]
EOS
	cat > "$T/specs/extra.yaml" <<EOS
cdiVersion: 0.5.0
kind: test.example.com/extra
devices:
- name: x
  containerEdits:
    deviceNodes: [{path: /dev/extra, hostPath: /dev/zero}]
EOS
}
teardown() { slurm_teardown; }

# What a task of a root reports: its GPUs as Slurm allocated them, then each /dev/nvidia*
# with its rdev, then the spec's variable.
GPU_PROBE='echo "step gpus ${SLURM_STEP_GPUS-none}"; for d in /dev/nvidia*; do [ -e "$d" ] && echo "$d $(stat -c %t:%T "$d")"; done; echo "driver ${TEST_DRIVER-none}"'

rdev() { stat -c %t:%T "$CLUSTER_GPU_DIR/gpu$1"; }

@test "gpus: --gres=gpu:1 and gpu:2: the step's root has exactly the GPUs Slurm gave it, the host's nodes, no option needed; none without" {
	run --separate-stderr srun_ -N1 -n1 --gres=gpu:1 --devroot-image="$EDR_TEMPLATE" /bin/sh -c "$GPU_PROBE"
	assert_success
	local g
	g=$(sed -n 's/^step gpus //p' <<<"$output")
	[[ $g == 0 || $g == 1 ]] || fail "Slurm gave no single GPU: $(last_run)"
	assert_equal "$(grep -c '^/dev/nvidia' <<<"$output")" 1
	assert_line "/dev/nvidia$g $(rdev "$g")"
	assert_line "driver loaded"
	run --separate-stderr srun_ -N1 -n1 --gres=gpu:2 --devroot-image="$EDR_TEMPLATE" /bin/sh -c "$GPU_PROBE"
	assert_success
	assert_line "step gpus 0,1"
	assert_line "/dev/nvidia0 $(rdev 0)"
	assert_line "/dev/nvidia1 $(rdev 1)"
	# A step with no GPU has none, and reads no spec: a broken one is no matter.
	echo 'not a spec' > "$T/specs/broken.yaml"
	run --separate-stderr srun_ -N2 -n2 --devroot-image="$EDR_TEMPLATE" /bin/sh -c "$GPU_PROBE"
	assert_success
	[[ $(grep -c '^/dev/nvidia' <<<"$output") -eq 0 ]] || fail "a step without GPUs got some: $(last_run)"
	assert_equal "$(grep -c '^driver none$' <<<"$output")" 2
}

@test "gpus: two jobs holding one GPU each on one node see one GPU each, not the same" {
	local a=$T/a b=$T/b
	srun_ -N1 -n1 -w n1 --gres=gpu:1 --devroot-image="$EDR_TEMPLATE" /bin/sh -c "$GPU_PROBE; sleep 4" >"$a" 2>&1 &
	local first=$!
	sleep 1
	srun_ -N1 -n1 -w n1 --gres=gpu:1 --devroot-image="$EDR_TEMPLATE" /bin/sh -c "$GPU_PROBE" >"$b" 2>&1 ||
		fail "the second job failed: $(cat "$b")"
	wait "$first" || fail "the first job failed: $(cat "$a")"
	local ga gb
	ga=$(sed -n 's/^step gpus //p' "$a")
	gb=$(sed -n 's/^step gpus //p' "$b")
	[[ -n $ga && -n $gb && $ga != "$gb" ]] || fail "the jobs were given GPUs '$ga' and '$gb'"
	for f in "$a" "$b"; do
		local g
		g=$(sed -n 's/^step gpus //p' "$f")
		[[ $(grep -c '^/dev/nvidia' "$f") -eq 1 ]] && grep -qx "/dev/nvidia$g $(rdev "$g")" "$f" ||
			fail "not exactly GPU $g: $(cat "$f")"
	done
}

@test "gpus: --devroot-device and DEVROOT_DEVICE give other CDI devices, beside the job's GPUs" {
	run --separate-stderr srun_ -N1 -n1 --gres=gpu:1 --devroot-device=test.example.com/extra=x \
		--devroot-image="$EDR_TEMPLATE" /bin/sh -c 'stat -c %t:%T /dev/extra; ls /dev | grep -c "^nvidia"'
	assert_success
	assert_equal "$output" "$(stat -c %t:%T /dev/zero)
1"
	DEVROOT_DEVICE=test.example.com/extra=x run --separate-stderr srun_ -N1 -n1 \
		--devroot-image="$EDR_TEMPLATE" /bin/sh -c 'stat -c %t:%T /dev/extra'
	assert_success
	assert_output "$(stat -c %t:%T /dev/zero)"
}

@test "gpus: a bad --devroot-device fails srun in one line; a device no spec defines fails the task, the command not run" {
	run --separate-stderr srun_ -N1 -n1 --devroot-device=gpu0 --devroot-image="$EDR_TEMPLATE" touch "$T/ran"
	assert_failure
	[[ $stderr == *"--devroot-device 'gpu0': 'gpu0' is not VENDOR/CLASS=NAME"* ]] || fail "$(last_run)"
	run --separate-stderr srun_ -N1 -n1 --devroot-device=test.example.com/extra=nope \
		--devroot-image="$EDR_TEMPLATE" touch "$T/ran"
	assert_failure
	[[ $stderr == *"--device test.example.com/extra=nope: no such device in $T/specs/extra.yaml"* ]] ||
		fail "$(last_run)"
	[[ ! -e $T/ran ]] || fail "the command ran"
}
