#!/usr/bin/env bats
# OCI images from local files: oci:DIR[:TAG] layouts and docker-archive:FILE[:REPO:TAG]
# archives; layers, whiteouts, the image config, and hostile images.

load common
setup_file() { oci_check_prerequisites; }
setup() { oci_setup; }
teardown() { fetch_teardown; }

# A 3-layer image exercising whiteouts and opaque directories (image-spec layer.md).
whiteout_image() {
	image "$1" <<-EOF
	{"tag": "w", "layers": [$BASE_LAYER,
	 {"compression": "gzip", "entries": [
	   {"path": "data", "type": "dir"}, {"path": "data/keep", "data": "keep"},
	   {"path": "data/gone", "data": "gone"}, {"path": "data/tree", "type": "dir"},
	   {"path": "data/tree/deep", "data": "deep"},
	   {"path": "opq", "type": "dir"}, {"path": "opq/old", "data": "old"},
	   {"path": "opq/sub", "type": "dir"}, {"path": "opq/sub/old2", "data": "old2"},
	   {"path": "flip", "type": "dir"}, {"path": "flip/inner", "data": "inner"},
	   {"path": "file2dir", "data": "a file"}]},
	 {"compression": "zstd", "entries": [
	   {"path": "data/.wh.gone"}, {"path": "data/.wh.tree"},
	   {"path": "opq/new", "data": "new"}, {"path": "opq/.wh..wh..opq"},
	   {"path": "flip", "data": "now a file"},
	   {"path": "file2dir", "type": "dir"}, {"path": "file2dir/x", "data": "x"},
	   {"path": "data/.wh.never-existed"}]},
	 {"compression": "none", "entries": [
	   {"path": "data/gone", "data": "back again"},
	   {"path": "flip", "type": "dir"}, {"path": "flip/again", "data": "again"}]}]}
	EOF
}

config_image() {
	image "$1" <<-EOF
	{"tag": "c", "layers": [$BASE_LAYER],
	 "config": {"Env": ["FOO=from image", "PATH=/bin:/usr/bin", "HOME=/image-home"],
	            "WorkingDir": "/work/dir", "User": "4242",
	            "Entrypoint": ["/bin/sh", "-c", "echo \"entry \$0 \$*\"", "ep"],
	            "Cmd": ["one", "two"]}}
	EOF
}

@test "oci: a layout imports and records the image and its manifest digest" {
	digest=$(config_image "$T/img")
	edr_run create c --from "oci:$T/img:c" --quiet
	assert_status 0
	run edr images
	assert_output --partial "$digest"
	assert_output --partial "oci:$T/img:c"
	run edr images --json
	run python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[0]["name"], d[0]["digest"])' <<< "$output"
	assert_output "c $digest"
}

@test "oci: a relative oci:DIR or docker-archive:FILE is recorded absolute, wherever images is run" {
	config_image "$T/img" >/dev/null
	skopeo copy -q "oci:$T/img:c" "docker-archive:$T/c.tar:img:c" 2>/dev/null || skip "skopeo cannot write a docker-archive"
	cd "$T"
	edr create rel --from oci:img:c --quiet
	edr create arch --from docker-archive:./c.tar --quiet
	cd /
	edr_run images
	assert_line --regexp "^rel +sha256:[0-9a-f]{64} +oci:$T/img:c\$"
	assert_line --regexp "^arch +sha256:[0-9a-f]{64} +docker-archive:$T/c.tar\$"
	edr_run list --json
	assert_output --partial "\"source\": \"oci:$T/img:c\""
}

@test "oci: without a tag takes the layout's only image" {
	config_image "$T/img" >/dev/null
	edr_run create c --from "oci:$T/img" --quiet
	assert_status 0
}

@test "oci: a tag the layout does not have is one error, nothing created" {
	config_image "$T/img" >/dev/null
	edr_run create c --from "oci:$T/img:nope"
	assert_refused c "no image tagged 'nope'"
}

@test "run NAME with no command runs the image's Entrypoint+Cmd" {
	config_image "$T/img" >/dev/null
	edr create c --from "oci:$T/img:c" --quiet
	edr_run run c
	assert_status 0
	assert_output "entry ep one two"
}

@test "run NAME --entrypoint -- ARGS gives ARGS to the Entrypoint instead of Cmd" {
	config_image "$T/img" >/dev/null
	edr create c --from "oci:$T/img:c" --quiet
	edr_run run c --entrypoint -- three
	assert_status 0
	assert_output "entry ep three"
}

@test "enter NAME gives the user's shell, not the image's Entrypoint+Cmd (a REPL in many images)" {
	config_image "$T/img" >/dev/null
	edr create c --from "oci:$T/img:c" --quiet
	edr_run enter c <<< 'echo "in-shell $FOO"; exit 3'
	assert_status 3
	assert_output --partial "in-shell from image"
	refute_output --partial "entry ep"
}

@test "run -- CMD sees the image's Env under ours, and starts in its WorkingDir" {
	config_image "$T/img" >/dev/null
	edr create c --from "oci:$T/img:c" --quiet
	edr_run run c -- sh -c 'echo "$FOO|$PATH|$PWD|$HOME|$(id -u)"'
	assert_status 0
	# HOME is ours (the image's is overridden); User 4242 is not applied: we stay ourselves.
	assert_output "from image|/bin:/usr/bin|/work/dir|/home/$(id -un)|$(id -u)"
	edr_run run c --workdir / --env FOO=mine -- sh -c 'echo "$FOO|$PWD"'
	assert_output "mine|/"
	edr_run run c --clear-env -- sh -c 'echo "${FOO-unset}"'
	assert_output "unset"
}

# host_unchanged DIR: DIR still holds only bin/evil and an empty wd (what the test made).
host_unchanged() {
	[[ $(cd "$1" && find . | sort | tr '\n' ' ') == ". ./bin ./bin/evil ./wd " ]] ||
		fail "the host's $1 changed: $(cd "$1" && find . | sort | tr '\n' ' ')"
}

@test "an image's config, and the config an archive carries, apply only inside the root: a WorkingDir through a symlink out or /.., an Entrypoint and a PATH naming host files" {
	local H=$T/host r layouts=(flat)
	unshare -U true 2>/dev/null && layouts+=(overlay)
	# The host's directory; the image has one of the same path, which /out names.
	mkdir -p "$H/bin" "$H/wd"
	printf '#!/bin/sh\necho ran > %s/ran\n' "$H" > "$H/bin/evil"
	chmod +x "$H/bin/evil"
	image "$T/img" >/dev/null <<-EOF
	{"tag": "h", "layers": [$BASE_LAYER, {"entries": [{"path": "${H#/}", "type": "dir"},
	                                          {"path": "out", "type": "symlink", "target": "$H"}]}],
	 "config": {"WorkingDir": "/../../../out/wd", "Env": ["PATH=$H/bin:/bin:/usr/bin"],
	            "Entrypoint": ["$H/bin/evil"]}}
	EOF
	for r in "${layouts[@]}"; do
		edr create "$r" --"$r" --from "oci:$T/img:h" --quiet
		host_unchanged "$H"
		# The Entrypoint is the root's file of that name: there is none.
		run -127 --separate-stderr "$EDR_BIN" run "$r"
		run -127 --separate-stderr "$EDR_BIN" run "$r" -- evil
		edr_run run "$r" -- sh -c 'pwd; echo here > here; echo "$PATH"'
		assert_status 0
		assert_output "$H/wd
$H/bin:/bin:/usr/bin"
		[[ $r == overlay || $(cat "$(root_of "$r")$H/wd/here") == here ]] ||
			fail "$r: the file written in the WorkingDir is not in the root"
		host_unchanged "$H"
	done
	# The same config carried by the flat root's export: a root made from the archive.
	edr export flat "$T/flat.tar.gz" --compress gzip --quiet
	edr create carried --from "$T/flat.tar.gz" --quiet
	run -127 --separate-stderr "$EDR_BIN" run carried
	run -127 --separate-stderr "$EDR_BIN" run carried -- sh -c 'pwd; echo again > here2; evil'
	assert_output "$H/wd"
	[[ $(cat "$(root_of carried)$H/wd/here2") == again ]] || fail "not written in the root"
	host_unchanged "$H"
}

@test "run NAME with no command on a root without Entrypoint or Cmd is a usage error" {
	image "$T/img" <<< "{\"tag\": \"b\", \"layers\": [$BASE_LAYER]}" >/dev/null
	edr create b --from "oci:$T/img:b" --quiet
	edr_run run b
	assert_edr_error "$EDR_TOOL_EXIT" "missing command" "no image Entrypoint or Cmd"
}

@test "whiteouts and opaque directories across 3 layers (gzip, zstd, plain tar)" {
	whiteout_image "$T/img" >/dev/null
	edr_run create w --from "oci:$T/img:w" --quiet
	assert_status 0
	r=$(root_of w)
	[[ $(cat "$r/data/keep") == keep ]]
	[[ $(cat "$r/data/gone") == "back again" ]]    # removed by layer 2, re-added by 3
	[[ ! -e $r/data/tree ]]                         # a whole tree whited out
	[[ $(cat "$r/opq/new") == new ]]                # opaque keeps its own layer's entries
	[[ ! -e $r/opq/old && ! -e $r/opq/sub ]]        # ... and hides the lower ones
	[[ -d $r/flip && $(cat "$r/flip/again") == again && ! -e $r/flip/inner ]] # dir, file, dir
	[[ -d $r/file2dir && $(cat "$r/file2dir/x") == x ]]
	run find "$r" -name '.wh.*'
	assert_output ""                                # no whiteout file in the result
}

@test "overlay roots: whiteouts and opaque directories across 3 layers seen through the overlay" {
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	whiteout_image "$T/img" >/dev/null
	edr_run create w --overlay --from "oci:$T/img:w" --quiet
	assert_status 0
	grep -q '"layout": "overlay"' "$XDG_DATA_HOME/enter-devroot/meta/w.json"
	edr_run run w -- sh -c 'for f in /data/keep /data/gone /opq/new /flip/again /file2dir/x; do cat $f; echo; done
		ls -A /opq; for p in /data/tree /opq/old /opq/sub /flip/inner; do [ -e $p ] && echo "present: $p"; done
		find / -xdev -name ".wh.*"; true'
	assert_status 0
	assert_output "keep
back again
new
again
x
new"
	# The same tree as a flat root of the image, through export (layers, whiteouts applied).
	edr create f --flat --from "oci:$T/img:w" --quiet
	edr run f -- true # entering w made the mount point of the host's resolv.conf: f's too
	edr export w "$T/w.tar" --compress none
	edr export f "$T/f.tar" --compress none
	[[ $(tar -tvf "$T/w.tar" | awk '{print $1, $6}' | sort) == "$(tar -tvf "$T/f.tar" | awk '{print $1, $6}' | sort)" ]] ||
		fail "the overlay root's tree differs from the flat root's: $(diff <(tar -tf "$T/w.tar" | sort) <(tar -tf "$T/f.tar" | sort))"
	# A second root of the image shares its layers: nothing of w's in it.
	edr create w2 --overlay --from "oci:$T/img:w" --quiet
	edr run w -- sh -c 'echo w > /data/keep'
	edr_run run w2 -- cat /data/keep
	assert_output keep
	! grep -F -- "$T" /proc/self/mountinfo || fail "mounted on the host"
}

@test "overlay roots: run --ephemeral of a cached image mounts its layers itself, with the image's Env, WorkingDir and whiteouts" {
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	[[ $(id -u) -ne 0 ]] || skip "as root auto mode enters in chroot"
	config_image "$T/cfg" >/dev/null
	whiteout_image "$T/img" >/dev/null
	# Overlay roots store their layers, and what the sources resolved to is recorded.
	edr create c --overlay --from "oci:$T/cfg:c" --quiet
	edr create w --overlay --from "oci:$T/img:w" --quiet
	edr remove c w
	edr_run --verbose run --ephemeral --from "oci:$T/cfg:c" -- sh -c 'echo "$FOO|$PWD|$(id -un)"'
	assert_status 0
	assert_output "from image|/work/dir|$(id -un)"
	[[ $stderr == *"mounted in the job's namespaces over a tmpfs upper"* ]] || fail "not the direct path: $stderr"
	edr_run run --ephemeral --from "oci:$T/img:w" -- sh -c 'for f in /data/keep /data/gone /opq/new; do cat $f; echo; done; ls -A /opq'
	assert_status 0
	assert_output "keep
back again
new
new"
	[[ -z $(ls -A "$XDG_DATA_HOME/enter-devroot/roots") ]] || fail "a root was made"
	! grep -F -- "$T" /proc/self/mountinfo || fail "mounted on the host"
}

@test "overlay roots: run --ephemeral and create of oci:DIR whose DIR is a symlink repointed to another layout do not use the record" {
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
	[[ $(id -u) -ne 0 ]] || skip "as root auto mode enters in chroot"
	local s
	for s in a b; do
		image "$T/$s" >/dev/null <<-EOF
		{"tag": "t", "layers": [$BASE_LAYER, {"entries": [{"path": "marker", "data": "$s"}]}]}
		EOF
	done
	ln -s a "$T/current"
	edr create ca --overlay --from oci:current:t --quiet # records what oci:current:t resolved to
	edr_run run --ephemeral --from oci:current:t -- cat /marker
	assert_output a
	ln -sfn b "$T/current"
	edr_run --verbose run --ephemeral --from oci:current:t -- cat /marker
	assert_status 0
	assert_output b
	[[ $stderr == *"is not the file it was made from"* ]] || fail "-v does not say why: $stderr"
	ln -sfn a "$T/current"
	edr create ca2 --overlay --from oci:current:t --quiet
	ln -sfn b "$T/current"
	edr create cb --overlay --from oci:current:t --quiet
	edr_run run cb -- cat /marker
	assert_output b
}

@test "a whiteout through a symlink is refused and removes nothing outside" {
	assert_image_refused s "esc/.wh.file" "symlink" <<-EOF
	{"tag": "s", "layers": [$BASE_LAYER,
	 {"entries": [{"path": "esc", "type": "symlink", "target": "$OUT"}]},
	 {"entries": [{"path": "esc/.wh.file"}]}]}
	EOF
}

@test "an opaque whiteout through a relative symlink is refused and removes nothing outside" {
	assert_image_refused s "esc/.wh..wh..opq" "symlink" <<-EOF
	{"tag": "s", "layers": [$BASE_LAYER,
	 {"entries": [{"path": "esc", "type": "symlink", "target": "../../../../../../../../../$OUT"}]},
	 {"entries": [{"path": "esc/.wh..wh..opq"}]}]}
	EOF
}

@test "a whiteout of '..' is refused" {
	assert_image_refused d ".wh..." "whiteout of '..'" <<-EOF
	{"tag": "d", "layers": [$BASE_LAYER, {"entries": [{"path": "etc/.wh..."}]}]}
	EOF
	[[ -d $(dirname "$XDG_DATA_HOME") ]]
}

@test "a whiteout of '.' is refused" {
	assert_image_refused d ".wh.." "whiteout of '.'" <<-EOF
	{"tag": "d", "layers": [$BASE_LAYER, {"entries": [{"path": "etc/.wh.."}]}]}
	EOF
}

@test "aufs whiteout metadata (.wh..wh.*) other than the opaque marker is refused" {
	assert_image_refused d "unsupported whiteout" <<-EOF
	{"tag": "d", "layers": [$BASE_LAYER, {"entries": [{"path": ".wh..wh.plnk", "type": "dir"}]}]}
	EOF
}

@test "an entry under a whiteout name is refused" {
	assert_image_refused d "a path through a whiteout name" <<-EOF
	{"tag": "d", "layers": [$BASE_LAYER, {"entries": [{"path": "etc/.wh.x/y", "data": "y"}]}]}
	EOF
}

@test "a hardlink to a file of an earlier layer becomes a copy of it (each layer is a tree of its own)" {
	image "$T/img" <<-EOF >/dev/null
	{"tag": "h", "layers": [$BASE_LAYER,
	 {"entries": [{"path": "orig", "data": "shared"}]},
	 {"entries": [{"path": "link", "type": "hardlink", "target": "orig"}]}]}
	EOF
	edr_run create h --from "oci:$T/img:h" --quiet
	assert_status 0
	r=$(root_of h)
	assert_equal "$(cat "$r/link")" shared
	assert_equal "$(stat -c '%a %Y' "$r/link")" "$(stat -c '%a %Y' "$r/orig")"
}

@test "a directory its owner cannot read, in two layers, gets the top layer's mode" {
	# 0311 = 201, 0111 = 73, 0555 = 365: what a later change inside such a directory makes.
	image "$T/img" <<-EOF >/dev/null
	{"tag": "d", "layers": [$BASE_LAYER,
	 {"entries": [{"path": "srv", "type": "dir"},
	              {"path": "srv/wx", "type": "dir", "mode": 201}, {"path": "srv/wx/a", "data": "a"},
	              {"path": "srv/none", "type": "dir", "mode": 0},
	              {"path": "srv/x", "type": "dir", "mode": 73},
	              {"path": "srv/last", "type": "dir", "mode": 448}]},
	 {"compression": "gzip", "entries": [
	              {"path": "srv/wx", "type": "dir", "mode": 201}, {"path": "srv/wx/b", "data": "b"},
	              {"path": "srv/none", "type": "dir", "mode": 0},
	              {"path": "srv/x", "type": "dir", "mode": 73},
	              {"path": "srv/last", "type": "dir", "mode": 365}]}]}
	EOF
	edr_run create d --from "oci:$T/img:d" --quiet
	assert_status 0
	r=$(root_of d)
	assert_equal "$(stat -c %a "$r/srv/wx") $(stat -c %a "$r/srv/none") $(stat -c %a "$r/srv/x")" "311 0 111"
	assert_equal "$(stat -c %a "$r/srv/last")" 555
	chmod 700 "$r/srv/wx"
	assert_equal "$(cat "$r/srv/wx/a")$(cat "$r/srv/wx/b")" ab
	# The layers keep those modes too: made removable for the teardown.
	chmod -R u+rwx "$XDG_CACHE_HOME"
}

@test "hard links to a symlink and to a FIFO of a lower layer are copies; one to a device node is skipped with it" {
	image "$T/img" <<-EOF >/dev/null
	{"tag": "l", "layers": [$BASE_LAYER,
	 {"entries": [{"path": "usr/py3", "type": "symlink", "target": "python3.11"},
	              {"path": "run", "type": "dir"}, {"path": "run/fifo", "type": "fifo", "mode": 416},
	              {"path": "dev/null2", "type": "chardev"}]},
	 {"entries": [{"path": "usr/python3", "type": "hardlink", "target": "usr/py3"},
	              {"path": "run/fifo2", "type": "hardlink", "target": "run/fifo"},
	              {"path": "dev/null3", "type": "hardlink", "target": "dev/null2"}]}]}
	EOF
	edr_run create l --from "oci:$T/img:l" --quiet
	assert_status 0
	r=$(root_of l)
	[[ -L $r/usr/python3 && $(readlink "$r/usr/python3") == python3.11 ]] ||
		fail "usr/python3 is not the symlink: $(ls -li "$r/usr")"
	[[ -p $r/run/fifo2 ]] || fail "run/fifo2 is not the FIFO: $(ls -li "$r/run")"
	assert_equal "$(stat -c %a "$r/run/fifo") $(stat -c %a "$r/run/fifo2")" "640 640"
	[[ ! -e $r/dev/null2 && ! -e $r/dev/null3 ]] || fail "a device entry was created"
	# One line per layer: the node, then its link.
	run grep -c "skipped 1 device node(s) or socket(s), or hard link(s) to them" <<< "$stderr"
	assert_output 2
}

@test "user.* xattrs in a layer are restored; a file capability is dropped in one warning per layer" {
	python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.probe", b"1")' "$T" 2>/dev/null ||
		skip "this filesystem takes no user.* attributes"
	image "$T/img" <<-EOF >/dev/null
	{"tag": "x", "layers": [$BASE_LAYER,
	 {"entries": [{"path": "f", "data": "x", "xattrs": {"user.k": "6f6b"}},
	              {"path": "d", "type": "dir", "xattrs": {"user.k": "6f6b"}},
	              {"path": "ping", "data": "elf", "mode": 493,
	               "xattrs": {"security.capability": "0100000200200000000000000000000000000000"}}]},
	 {"entries": [{"path": "g", "data": "y", "xattrs": {"trusted.x": "6f6b", "user.k": "6f6b"}}]}]}
	EOF
	edr_run create x --from "oci:$T/img:x" --quiet
	assert_status 0
	r=$(root_of x)
	run python3 -c 'import os,sys; print(*[os.getxattr(f, "user.k").decode() for f in sys.argv[2:]], os.listxattr(sys.argv[1]))' "$r/ping" "$r/f" "$r/d" "$r/g"
	assert_output "ok ok ok []"
	# Each layer is unpacked on its own (the layer store): one warning for each.
	assert_equal "${#stderr_lines[@]}" 2
	[[ ${stderr_lines[0]} == *"dropped extended attribute(s): 1 (first security.capability on 'ping': Operation not permitted"* ]] ||
		fail "not the first layer's warning: $stderr"
	[[ ${stderr_lines[1]} == *"dropped extended attribute(s): 1 (first trusted.x on 'g'"* ]] ||
		fail "not the second layer's warning: $stderr"
}

@test "without a tag, a layout holding several images asks for one and lists the tags" {
	config_image "$T/img" >/dev/null
	whiteout_image "$T/img" >/dev/null
	edr_run create c --from "oci:$T/img"
	assert_refused c "holds 2 images" "oci:DIR:TAG" "tags: c, w"
	# What `podman push IMAGE oci:DIR` (no tag) leaves, twice.
	image "$T/untagged" <<< '{"tag": null, "layers": ['"$BASE_LAYER"']}' >/dev/null
	image "$T/untagged" <<< '{"tag": null, "layers": ['"$BASE_LAYER"', {"entries": [{"path": "x"}]}]}' >/dev/null
	edr_run create c --from "oci:$T/untagged"
	assert_refused c "holds 2 images" "none is tagged"
}

@test "an absolute symlink is created as it is and resolves inside the root" {
	image "$T/img" <<-EOF >/dev/null
	{"tag": "a", "layers": [$BASE_LAYER,
	 {"entries": [{"path": "abs", "type": "symlink", "target": "/etc/hostname-in-root"},
	              {"path": "etc/hostname-in-root", "data": "inside"}]}]}
	EOF
	edr create a --from "oci:$T/img:a" --quiet
	[[ $(readlink "$(root_of a)/abs") == /etc/hostname-in-root ]]
	edr_run run a -- cat /abs
	assert_output inside
}

@test "a multi-arch index picks this machine's platform, --platform another" {
	[[ $(uname -m) == x86_64 ]] || skip "the index holds linux/amd64 and linux/arm64"
	image "$T/img" <<-EOF >/dev/null
	{"tag": "m", "layers": [$BASE_LAYER], "platforms": ["linux/arm64", "linux/amd64"]}
	EOF
	edr create m --from "oci:$T/img:m" --quiet
	[[ $(cat "$(root_of m)/platform") == linux/amd64 ]]
	edr create m2 --from "oci:$T/img:m" --platform linux/arm64 --quiet
	[[ $(cat "$(root_of m2)/platform") == linux/arm64 ]]
}

@test "an index with no matching platform is one error, nothing created" {
	image "$T/img" <<-EOF >/dev/null
	{"tag": "m", "layers": [$BASE_LAYER], "platforms": ["linux/arm64", "linux/s390x"]}
	EOF
	edr_run create m --from "oci:$T/img:m" --platform linux/riscv64
	assert_refused m "no image for platform linux/riscv64"
	edr_run create m --from "oci:$T/img:m" --platform nonsense
	assert_refused m "invalid --platform"
}

@test "a layer whose bytes are not those of its digest is refused, nothing created" {
	assert_image_refused x "layer sha256:" "SHA-256 mismatch" <<-EOF
	{"tag": "x", "layers": [{"entries": [{"path": "bin", "type": "dir"},
	  {"path": "bin/f", "data": "$(printf 'a%.0s' {1..3000})"}]}],
	 "hostile": {"flip_layer_byte": 2000}}
	EOF
}

@test "a manifest over 4 MiB is refused before it is parsed" {
	assert_image_refused x "over the limit of 4194304" <<-EOF
	{"tag": "x", "layers": [$BASE_LAYER], "hostile": {"manifest_padding": 4200000}}
	EOF
}

@test "a config that is not JSON is refused, nothing created" {
	assert_image_refused x "config sha256:" "not valid JSON" <<-EOF
	{"tag": "x", "layers": [$BASE_LAYER], "hostile": {"config_not_json": true}}
	EOF
}

@test "an index.json whose JSON error quotes a newline and an escape is refused in one line" {
	# The parser's message quotes the bytes at fault (fuzz-oci found it): printed as they
	# are, a layout's author writes a second line, or a terminal escape, into our error.
	mkdir "$T/img"
	echo '{"imageLayoutVersion": "1.0.0"}' > "$T/img/oci-layout"
	printf '{"schemaVersion": 2, "manifests": [{"a\\\n\033[31m": 1}]}' > "$T/img/index.json"
	edr_run create x --from "oci:$T/img:x"
	assert_refused x "index.json" "not valid JSON"
	[[ $stderr != *$'\033'* ]] || fail "the escape reached stderr: $stderr"
}

@test "a config whose descriptor lies about its size is refused" {
	assert_image_refused x "its descriptor says 5" <<-EOF
	{"tag": "x", "layers": [$BASE_LAYER], "hostile": {"config_size": 5}}
	EOF
}

@test "a manifest of more than 1000 layers is refused before any is opened" {
	assert_image_refused x "1001 layers, over the limit of 1000" <<-EOF
	{"tag": "x", "layers": [{"entries": [{"path": "f", "data": "f"}]}], "hostile": {"repeat_layers": 1001}}
	EOF
}

@test "a truncated layer is refused, nothing created" {
	assert_image_refused x "layer sha256:" <<-EOF
	{"tag": "x", "layers": [$BASE_LAYER], "hostile": {"truncate_layer": 30000}}
	EOF
}

@test "a layer that is not a tar is refused, nothing created" {
	printf 'not a tar at all, but long enough to be read as one block or two\n%.0s' {1..20} > "$T/junk"
	assert_image_refused x "layer sha256:" <<-EOF
	{"tag": "x", "layers": [$BASE_LAYER, {"compression": "none", "tarball": "$T/junk"}]}
	EOF
}

@test "a layout that is not one is one error" {
	mkdir "$T/empty"
	edr_run create x --from "oci:$T/empty"
	assert_refused x "not an OCI image layout"
}

@test "invalid image references are refused before anything is read" {
	edr_run create x --from "docker://UPPER/case"
	assert_refused x "invalid image reference" "repository"
	edr_run create x --from "docker://debian@sha256:1234"
	assert_refused x "invalid digest"
	edr_run create x --from "oci:"
	assert_refused x "the path is empty"
	edr_run create x --from "oci:$T/img" --sha256 "$(printf '0%.0s' {1..64})"
	assert_refused x "do not apply to an image"
}

@test "docker-archive: what skopeo (docker save) writes imports, by REPO:TAG or alone" {
	command -v skopeo >/dev/null || skip "skopeo is not installed (apt-get install skopeo)"
	config_image "$T/img" >/dev/null
	skopeo copy -q "oci:$T/img:c" "docker-archive:$T/saved.tar:example/app:v1"
	edr_run create d1 --from "docker-archive:$T/saved.tar:example/app:v1" --quiet
	assert_status 0
	edr_run run d1
	assert_output "entry ep one two"
	edr_run create d2 --from "docker-archive:$T/saved.tar" --quiet
	assert_status 0
	edr_run create d3 --from "docker-archive:$T/saved.tar:example/app:v2"
	assert_refused d3 "no image tagged 'example/app:v2'"
}

@test "--from PATH of what docker save wrote, or of an OCI layout directory, is the image it holds (one line says so); an OCI archive is refused naming what to do" {
	command -v skopeo >/dev/null || skip "skopeo is not installed (apt-get install skopeo)"
	config_image "$T/img" >/dev/null
	skopeo copy -q "oci:$T/img:c" "docker-archive:$T/saved.tar:example/app:v1"
	edr_run create d1 --from "$T/saved.tar"
	assert_status 0
	assert_equal "$stderr" "enter-devroot: $T/saved.tar is an image archive (docker save, podman save): creating 'd1' from docker-archive:$T/saved.tar"
	edr_run run d1
	assert_output "entry ep one two"
	[[ ! -e $(root_of d1)/manifest.json ]] || fail "the archive was unpacked as a root filesystem"
	# A layout directory, as oci:DIR.
	edr_run create d2 --from "$T/img" --quiet
	assert_status 0
	[[ -z $stderr ]] || fail "--quiet, yet: $stderr"
	edr_run run d2
	assert_output "entry ep one two"
	# An OCI layout in a tar (podman save --format oci-archive): one line naming the way.
	skopeo copy -q "oci:$T/img:c" "oci-archive:$T/oci.tar"
	edr_run create d3 --from "$T/oci.tar"
	assert_refused d3 "an OCI image layout archive" "create --from oci:DIR"
	# The same written by tar from the layout directory ("./" first).
	tar -cf "$T/oci2.tar" -C "$T/img" .
	edr_run create d4 --from "$T/oci2.tar"
	assert_refused d4 "an OCI image layout archive"
	# A root filesystem's archive is still one, ./ first or not.
	tar -cf "$T/rootfs.tar" -C "$(root_of d1)" .
	edr_run create d5 --from "$T/rootfs.tar" --quiet
	assert_status 0
	[[ -d $(root_of d5)/bin ]] || fail "not unpacked as a root filesystem"
}

@test "docker-archive: a layer that does not match the config's diff_ids is refused" {
	command -v skopeo >/dev/null || skip "skopeo is not installed (apt-get install skopeo)"
	image "$T/img2" <<< "{\"tag\": \"b\", \"layers\": [$BASE_LAYER, {\"entries\": [{\"path\": \"f\", \"data\": \"AAAA\"}]}]}" >/dev/null
	skopeo copy -q "oci:$T/img2:b" "docker-archive:$T/saved.tar:example/app:v1"
	# Flip the file's content inside the archive: same size, another digest.
	python3 - "$T/saved.tar" <<-'EOF'
	import sys
	data = open(sys.argv[1], "rb").read()
	i = data.index(b"AAAA")
	open(sys.argv[1], "r+b").write(data[:i] + b"BBBB" + data[i + 4:])
	EOF
	edr_run create d --from "docker-archive:$T/saved.tar"
	assert_refused d "SHA-256 mismatch"
}

@test "docker-archive: a compressed archive is one error naming the fix" {
	command -v skopeo >/dev/null || skip "skopeo is not installed (apt-get install skopeo)"
	config_image "$T/img" >/dev/null
	skopeo copy -q "oci:$T/img:c" "docker-archive:$T/saved.tar:example/app:v1"
	gzip "$T/saved.tar"
	edr_run create d --from "docker-archive:$T/saved.tar.gz"
	assert_refused d "compressed archive"
}

@test "export and publish carry the image's config: a root made again from the archive (--from, --template) keeps Env, WorkingDir, Entrypoint, Cmd" {
	image "$T/img" >/dev/null <<-EOF
	{"tag": "g", "layers": [$BASE_LAYER, {"compression": "gzip", "entries": [
	   {"path": "opt/go/bin/gotool", "data": "#!/bin/sh\necho go tool \$PWD\n", "mode": 493},
	   {"path": "src", "type": "dir"}]}],
	 "config": {"Env": ["PATH=/opt/go/bin:/usr/bin:/bin"], "WorkingDir": "/src",
	            "Entrypoint": ["/bin/sh", "-c", "echo \"entry \$*\"", "ep"], "Cmd": ["one"]}}
	EOF
	edr create g --from "oci:$T/img:g" --quiet
	edr export g "$T/golang.tar.zst" --quiet
	edr create again --from "$T/golang.tar.zst" --quiet
	edr_run run again -- gotool
	assert_status 0
	assert_output "go tool /src"
	edr_run run again
	assert_output "entry one"
	[[ ! -e $(root_of again)/.enter-devroot ]] || fail "the carried config was left in the root"
	# The config is data about the image, not where the root came from: the new root's image
	# is its archive, and the labels naming the image go no further.
	edr_run images
	assert_line --regexp "^again +sha256:[0-9a-f]{64} +-\$"
	run sh -c 'tar --zstd -xOf "$1" ./.enter-devroot/image-config.json' _ "$T/golang.tar.zst"
	assert_output --partial "\"org.opencontainers.image.base.name\": \"oci:$T/img:g\""
	edr export again "$T/again.tar.zst" --quiet
	run sh -c 'tar --zstd -xOf "$1" ./.enter-devroot/image-config.json' _ "$T/again.tar.zst"
	assert_output --partial '"Cmd": ["one"]'
	refute_output --partial "org.opencontainers.image.base"
	# Published, it is a catalogue's template whose roots keep the config too.
	mkdir "$T/pub"
	edr publish "$T/pub" "$T/golang.tar.zst" --quiet
	edr create fromcat --template golang --index "$T/pub/index" --quiet
	edr_run run fromcat -- gotool
	assert_output "go tool /src"
	# Any tool reads it as an image config.
	run sh -c 'tar --zstd -xOf "$1" ./.enter-devroot/image-config.json | python3 -c "import json, sys; print(json.load(sys.stdin)[\"config\"][\"Env\"][0])"' _ "$T/golang.tar.zst"
	assert_output "PATH=/opt/go/bin:/usr/bin:/bin"
}

@test "a carried image config that is not JSON is refused, naming the archive and the member" {
	mkdir -p "$T/tree/.enter-devroot"
	echo '{"config": ' > "$T/tree/.enter-devroot/image-config.json"
	tar -C "$T/tree" -czf "$T/bad.tar.gz" .
	edr_run create bad --from "$T/bad.tar.gz"
	assert_edr_error "$EDR_TOOL_EXIT" "$T/bad.tar.gz" ".enter-devroot/image-config.json"
	assert_no_root bad
}
