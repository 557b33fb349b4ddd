#!/usr/bin/env bats
# Every image form through the plugin (srun --devroot-image=...), and a shared cache under
# concurrent cold jobs pulling from a registry: Debian's docker-registry on 127.0.0.1 with
# a CA made for the run (tests/oci/registry.bash), images written by tests/oci/mkimage.py.

load ../fetch/common
load ../oci/registry
load common

setup_file() {
	[[ -n ${EDR_SPANK:-} ]] || return 0
	command -v docker-registry >/dev/null && command -v skopeo >/dev/null || return 0
	export S=$BATS_FILE_TMPDIR
	make_certs "$S"
	start_registry reg
	# One image: the busybox template as its base layer, a small layer of its own, and
	# 64 MB that do not compress, so that concurrent pulls of it overlap.
	mkdir -p "$S/big"
	head -c 64M /dev/urandom >"$S/big/noise"
	tar -C "$S/big" -czf "$S/big.tar.gz" noise
	cat >"$S/spec.json" <<-EOS
	{"tag": "a", "layers": [{"compression": "gzip", "tarball": "$EDR_TEMPLATE"},
	 {"compression": "gzip", "entries": [{"path": "marker", "data": "from the image"}]},
	 {"compression": "gzip", "tarball": "$S/big.tar.gz"}]}
	EOS
	python3 "$BATS_TEST_DIRNAME/../oci/mkimage.py" "$S/lay" "$S/spec.json" >/dev/null
	# And one with an Entrypoint, for --devroot-entrypoint.
	cat >"$S/spec-e.json" <<-EOS
	{"tag": "e", "layers": [{"compression": "gzip", "tarball": "$EDR_TEMPLATE"}],
	 "config": {"Entrypoint": ["/bin/echo", "entry:"], "Cmd": ["nothing"]}}
	EOS
	python3 "$BATS_TEST_DIRNAME/../oci/mkimage.py" "$S/lay" "$S/spec-e.json" >/dev/null
	push "$S/lay:a" reg img:a
	# What Docker Hub's images are to pyxis's ubuntu:22.04 and to the built-in template
	# debian-bookworm-build, on the registry the tests name as the mirror of Docker Hub.
	push "$S/lay:a" reg library/ubuntu:22.04
	push "$S/lay:a" reg library/buildpack-deps:bookworm
	skopeo copy -q "oci:$S/lay:a" "docker-archive:$S/a.tar:img:a"
	cp "$EDR_TEMPLATE" "$S/t.tar.gz"
	export REG
	REG=$(reg reg)
}

teardown_file() { stop_registries; }

setup() {
	[[ -n ${EDR_SPANK:-} ]] || skip "spank_enter_devroot.so was not built (apt-get install libslurm-dev, then configure)"
	command -v docker-registry >/dev/null && command -v skopeo >/dev/null ||
		skip "docker-registry and skopeo are needed (apt-get install docker-registry skopeo)"
	slurm_setup
	CALLS_MARK=$(wc -l <"$EDR_SPANK_CALLS")
	export CURL_CA_BUNDLE=$S/ca.pem # the registry's CA, for enter-devroot in every task
}
teardown() { slurm_teardown; }

@test "images: a tarball, oci:, docker-archive: and docker:// through srun --devroot-image" {
	local form
	for form in "$S/t.tar.gz" "oci:$S/lay:a" "docker-archive:$S/a.tar:img:a" "docker://$REG/img:a"; do
		run --separate-stderr srun_ -N2 -n2 --devroot-image="$form" \
			/bin/sh -c 'echo "$(grep -c busybox /etc/os-release) $(cat /marker 2>/dev/null || echo no marker)"'
		[[ $status -eq 0 ]] || fail "$form: $(last_run)"
		if [[ $form == *t.tar.gz ]]; then
			assert_output "$(printf '1 no marker\n1 no marker')"
		else
			assert_output "$(printf '1 from the image\n1 from the image')"
		fi
	done
}

@test "images: srun pulls a docker:// image once, pinned; the tasks of two nodes ask the registry nothing" {
	local mark
	mark=$(wc -l <"$S/reg.log")
	run --separate-stderr srun_ -N2 -n4 --ntasks-per-node=2 --devroot-image="docker://$REG/img:a" \
		/bin/sh -c 'cat /marker; echo'
	assert_success
	[[ $(grep -cx 'from the image' <<<"$output") -eq 4 ]] || fail "$(last_run)"
	local log
	log=$(tail -n +"$((mark + 1))" "$S/reg.log")
	# srun's one resolution of the tag, and nothing by digest from the nodes' creates.
	[[ $(grep -c '"GET /v2/img/manifests/a ' <<<"$log") -eq 1 ]] ||
		fail "the tag was resolved other than once: $(grep -o '"GET /v2/img/manifests/[^ ]*' <<<"$log")"
	[[ $(grep -c '"GET /v2/img/manifests/sha256:' <<<"$log") -eq 0 ]] ||
		fail "a node asked the registry for the pinned manifest"
	[[ -z $(grep -o '"GET /v2/img/blobs/sha256:[0-9a-f]*' <<<"$log" | sort | uniq -d) ]] ||
		fail "a blob was downloaded twice"
	[[ $(calls | grep -c ' run ') -gt 0 && $(calls | grep ' run ' | grep -vc -- "--from docker://$REG/img@sha256:") -eq 0 ]] ||
		fail "the nodes did not create from the pinned reference: $(calls)"
}

@test "images: a docker:// tag the registry does not have fails srun before any task" {
	run --separate-stderr srun_ -N2 -n2 --devroot-image="docker://$REG/img:nope" /bin/sh -c ": >$T/ran"
	[[ $status -ne 0 ]] || fail "$(last_run)"
	[[ $stderr == *"no such image"* && $stderr == *"cannot fetch image docker://$REG/img:nope"* ]] ||
		fail "no cause on srun's stderr: $(last_run)"
	[[ ! -e $T/ran ]] || fail "the command ran"
	[[ $(calls | grep -c ' run ') -eq 0 ]] || fail "a task started: $(calls)"
}

@test "images: four concurrent cold jobs from docker:// share one cache and download each blob once" {
	export ENTER_DEVROOT_CACHE=$T/shared
	local i pids=() mark
	mark=$(wc -l <"$S/reg.log")
	for i in 1 2 3 4; do
		srun_ -N1 -n2 --devroot-image="docker://$REG/img:a" /bin/sh -c 'echo "$(cat /marker)"' \
			>"$T/job$i.out" 2>&1 &
		pids+=($!)
	done
	for i in 0 1 2 3; do
		wait "${pids[i]}" || fail "job $((i + 1)) failed: $(cat "$T/job$((i + 1)).out")"
	done
	for i in 1 2 3 4; do
		[[ $(grep -c '^from the image$' "$T/job$i.out") -eq 2 ]] || fail "job $i: $(cat "$T/job$i.out")"
	done
	local gets
	gets=$(tail -n +"$((mark + 1))" "$S/reg.log" | grep -o '"GET /v2/img/blobs/sha256:[0-9a-f]*' | sort | uniq -c)
	[[ -n $gets ]] || fail "no blob was fetched from the registry"
	[[ $(awk '$1 != 1' <<<"$gets") == "" ]] || fail "a blob was downloaded more than once:
$gets"
}

@test "images: --devroot-entrypoint runs the command through the image's Entrypoint" {
	run --separate-stderr srun_ -N1 -n1 --devroot-image="oci:$S/lay:e" --devroot-entrypoint /bin/true
	assert_success
	assert_output "entry: /bin/true"
	run --separate-stderr srun_ -N1 -n1 --devroot-image="oci:$S/lay:e" /bin/echo plain
	assert_success
	assert_output "plain"
}

@test "images: pyxis_compat=1 reads --container-image as pyxis: REGISTRY#IMAGE:TAG, Docker Hub's NAME:TAG, ./FILE" {
	run --separate-stderr srun_ -N1 -n1 --container-image="$REG#img:a" cat /marker
	assert_success
	assert_output "from the image"
	# No REGISTRY#: Docker Hub, a one-part name there being library/NAME (the mirror stands
	# in for Docker Hub).
	run --separate-stderr env ENTER_DEVROOT_REGISTRY_MIRROR="https://$REG/" \
		timeout -k 5 "$SLURM_TIMEOUT" srun -N1 -n1 --container-image=ubuntu:22.04 cat /marker
	assert_success
	assert_output "from the image"
	grep -q '"GET /v2/library/ubuntu/manifests/22.04 ' "$S/reg.log" || fail "Docker Hub's library/ubuntu was not asked for"
	# A path starting with ./ is a file, relative to where srun runs.
	cd "$S"
	run --separate-stderr srun_ -N1 -n1 --container-image=./t.tar.gz grep -c busybox /etc/os-release
	assert_success
	assert_output "1"
	[[ $(calls | grep -c -- " run .*--ephemeral --from ./t.tar.gz -- ") -eq 1 ]] || fail "$(calls)"
}

@test "images: pyxis_compat=1 refuses REGISTRY/IMAGE, which pyxis sends to Docker Hub, saying to write REGISTRY#IMAGE" {
	run --separate-stderr srun_ -N1 -n1 --container-image="$REG/img:a" cat /marker
	assert_failure
	[[ $stderr == *"--container-image '$REG/img:a': a registry is written REGISTRY#IMAGE"* ]] || fail "$(last_run)"
	[[ -z $(calls) ]] || fail "enter-devroot ran: $(calls)"
}

@test "images: --devroot-image=debian-bookworm-build, a built-in template, is pulled once by srun and pinned for the nodes" {
	local mark
	mark=$(wc -l <"$S/reg.log")
	run --separate-stderr env ENTER_DEVROOT_REGISTRY_MIRROR="https://$REG/" \
		timeout -k 5 "$SLURM_TIMEOUT" srun -N2 -n2 --devroot-image=debian-bookworm-build /bin/sh -c 'cat /marker; echo'
	assert_success
	assert_output "$(printf 'from the image\nfrom the image')"
	[[ $stderr != *"no template catalogue"* ]] || fail "$(last_run)"
	[[ $(calls | grep -c ' fetch debian-bookworm-build$') -eq 1 ]] || fail "$(calls)"
	[[ $(calls | grep -c ' run ') -eq 2 && $(calls | grep ' run ' | grep -vc -- '--from docker://[^ ]*@sha256:[0-9a-f]* ') -eq 0 ]] ||
		fail "the nodes did not create from the pinned image: $(calls)"
	[[ $(tail -n +"$((mark + 1))" "$S/reg.log" | grep -c '"GET /v2/library/buildpack-deps/manifests/bookworm ') -eq 1 ]] ||
		fail "the tag was resolved other than once"
}
