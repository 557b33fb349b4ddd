#!/usr/bin/env bats
# The layer store (issue 28, src/store/layers/layers.h): every layer unpacked once into
# $XDG_CACHE_HOME/enter-devroot/layers/sha256/DIFF_ID, shared by the roots of an image,
# checked against the config's diff_ids, kept in overlay form; flat roots copied from it;
# cache list and cache clean. An overlay root stores its layers on any filesystem (a flat
# root's first create stores them only where it can clone them: issue 37), so the tests
# that need them stored start with one.

load common
setup_file() { oci_check_prerequisites; }
setup() { oci_setup; }
teardown() { fetch_teardown; }

layers_dir() { echo "$XDG_CACHE_HOME/enter-devroot/layers/sha256"; }
layer_count() { ls "$(layers_dir)" 2>/dev/null | wc -l; }
overlay_roots() {
	unshare -U true 2>/dev/null || skip "unprivileged user namespaces are not available on this host"
}

# A 3-layer image: the base, a layer with a 1 MiB file, and a layer whiting out and
# making a directory opaque.
two_layer_image() {
	head -c $((1 << 20)) /dev/urandom | base64 -w0 > "$T/big.txt"
	image "$1" <<-EOF
	{"tag": "t", "layers": [$BASE_LAYER,
	 {"compression": "gzip", "entries": [
	   {"path": "big", "data": "$(cat "$T/big.txt")"},
	   {"path": "data", "type": "dir"}, {"path": "data/gone", "data": "gone"},
	   {"path": "data/keep", "data": "keep"},
	   {"path": "opq", "type": "dir"}, {"path": "opq/old", "data": "old"}]},
	 {"compression": "zstd", "entries": [
	   {"path": "data/.wh.gone"}, {"path": "opq/.wh..wh..opq"},
	   {"path": "opq/new", "data": "new"}]}]}
	EOF
}

# tree_listing ROOT: every entry's type, mode, size, mtime and link target; but the user's
# passwd and group lines and home directory, which each create adds at its own time.
tree_listing() {
	(cd "$1" && find . -printf '%y %m %s %T@ %l %p\n' | sort -k6 |
		grep -Ev ' \./(home|home/[^/]*|etc|etc/passwd|etc/group)$')
}

@test "layers: two roots of one image share its layers; the second create reads no blob and decompresses nothing" {
	overlay_roots
	two_layer_image "$T/img" >/dev/null
	edr create o --overlay --from "oci:$T/img:t" --quiet
	edr_run create a --from "oci:$T/img:t" --quiet
	assert_status 0
	assert_equal "$(layer_count)" 3
	local before
	before=$(du -sb "$XDG_CACHE_HOME/enter-devroot/layers" | cut -f1)
	# The layer blobs gone: a second create can only come from the layer store.
	python3 -c 'import json,os,sys
d = sys.argv[1] + "/blobs/sha256/"
m = json.load(open(d + json.load(open(sys.argv[1] + "/index.json"))["manifests"][0]["digest"][7:]))
for l in m["layers"]:
    os.unlink(d + l["digest"][7:])
print(len(m["layers"]))' "$T/img" > "$T/n"
	assert_equal "$(cat "$T/n")" 3
	edr_run create b --from "oci:$T/img:t" --quiet
	assert_status 0
	assert_equal "$(layer_count)" 3
	assert_equal "$(du -sb "$XDG_CACHE_HOME/enter-devroot/layers" | cut -f1)" "$before"
	diff <(tree_listing "$(root_of a)") <(tree_listing "$(root_of b)") || fail "b differs from a"
	cmp "$(root_of b)/big" "$T/big.txt"
	# Each root has its own files, not the layer's.
	[[ $(stat -c %i "$(root_of a)/big") != $(stat -c %i "$(root_of b)/big") ]] || fail "a and b share an inode"
	# Both record the same layers, the config's diff_ids, bottom first.
	local la lb
	la=$(grep -o '"layers": \[[^]]*\]' "$XDG_DATA_HOME/enter-devroot/meta/a.json")
	lb=$(grep -o '"layers": \[[^]]*\]' "$XDG_DATA_HOME/enter-devroot/meta/b.json")
	assert_equal "$la" "$lb"
	[[ $la == *sha256:*sha256:*sha256:* ]] || fail "not 3 layers: $la"
}

@test "layers: whiteouts and opaque directories are kept in overlay form in the layer, applied in the flat root" {
	overlay_roots
	two_layer_image "$T/img" >/dev/null
	edr create o --overlay --from "oci:$T/img:t" --quiet
	edr_run create a --from "oci:$T/img:t" --quiet
	assert_status 0
	local r top
	r=$(root_of a)
	[[ ! -e $r/data/gone && $(cat "$r/data/keep") == keep ]] || fail "whiteout not applied"
	[[ ! -e $r/opq/old && $(cat "$r/opq/new") == new ]] || fail "opaque dir not applied"
	run find "$r" -name '.wh.*' -o -type c -print
	assert_output ""
	run python3 -c 'import os,sys; print(os.listxattr(sys.argv[1]))' "$r/opq"
	assert_output "[]"
	# The top layer: a 0/0 character device for the whiteout, user.overlay.opaque=y.
	top=$(grep -o '"layers": \[[^]]*\]' "$XDG_DATA_HOME/enter-devroot/meta/a.json" |
		grep -o 'sha256:[0-9a-f]*"\]' | cut -c8-71)
	local tree=$(layers_dir)/$top/tree
	[[ -c $tree/data/gone ]] || fail "no whiteout device in the layer: $(ls -la "$tree/data")"
	assert_equal "$(stat -c '%t:%T' "$tree/data/gone")" "0:0"
	run python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "user.overlay.opaque").decode())' "$tree/opq"
	assert_output "y"
	[[ ! -e $tree/opq/old && ! -e $tree/data/.wh.gone ]] || fail "layer not in overlay form"
}

@test "layers: a layer that is not its config's diff_id is refused, naming it; nothing kept" {
	image "$T/img" <<-EOF >/dev/null
	{"tag": "d", "layers": [$BASE_LAYER, {"compression": "gzip", "entries": [{"path": "f", "data": "x"}]}],
	 "hostile": {"wrong_diff_id": 1}}
	EOF
	edr_run create d --from "oci:$T/img:d" --quiet
	assert_refused d "diff_id mismatch" "layer sha256:"
	overlay_roots
	edr_run create d --overlay --from "oci:$T/img:d" --quiet
	assert_refused d "diff_id mismatch" "layer sha256:"
	# The base layer was fine and stays; the mismatching one left nothing, not even debris.
	assert_equal "$(layer_count)" 1
	run find "$XDG_CACHE_HOME/enter-devroot/layers" -maxdepth 1 -name '.*' ! -name .
	assert_output ""
}

@test "layers: removing one root leaves the other whole and the layers in place" {
	overlay_roots
	two_layer_image "$T/img" >/dev/null
	edr create a --overlay --from "oci:$T/img:t" --quiet
	edr create b --from "oci:$T/img:t" --quiet
	local listing
	listing=$(tree_listing "$(root_of b)")
	edr remove a
	assert_equal "$(tree_listing "$(root_of b)")" "$listing"
	assert_equal "$(layer_count)" 3
	edr_run run b -- cat /opq/new
	assert_output new
}

# layers_snapshot: every entry of the layer store's trees: type, mode, size, modification
# time, link target, extended attributes and a regular file's SHA-256.
layers_snapshot() {
	python3 - "$(layers_dir)" <<-'EOF'
	import hashlib, os, stat, sys
	for d, dirs, files in sorted(os.walk(sys.argv[1])):
	    for n in [d] + sorted(os.path.join(d, f) for f in dirs + files):
	        st = os.lstat(n)
	        line = [n, oct(st.st_mode), str(st.st_size), str(st.st_mtime_ns), str(st.st_nlink)]
	        if stat.S_ISLNK(st.st_mode):
	            line.append(os.readlink(n))
	        elif stat.S_ISREG(st.st_mode):
	            line.append(hashlib.sha256(open(n, "rb").read()).hexdigest())
	        try:
	            line += sorted(os.listxattr(n, follow_symlinks=False))
	        except OSError:
	            pass
	        print(" ".join(line))
	EOF
}

@test "layers: what runs in a root of an image, flat (copied from the store) or overlay, changes no stored layer, nor the image's next root" {
	two_layer_image "$T/img" >/dev/null
	edr create f --keep-layers --from "oci:$T/img:t" --quiet
	[[ $(layer_count) -eq 3 ]] || fail "expected the 3 layers stored, got $(layer_count)"
	local before roots=(f) r
	before=$(layers_snapshot)
	edr create g --from "oci:$T/img:t" --quiet # copied from the store
	roots+=(g)
	if unshare -U true 2>/dev/null; then
		edr create o --overlay --from "oci:$T/img:t" --quiet
		roots+=(o)
	fi
	for r in "${roots[@]}"; do
		# Appends, overwrites, a mode, a time, a removal, a rename, new files in a layer's
		# directory: what a package manager does to the files a root got from its layers.
		edr_run run "$r" -- sh -c 'echo evil >> /big && echo evil > /data/keep &&
			chmod 700 /opq/new && touch -d @0 /etc/profile && rm /etc/os-release &&
			mv /bin/cat /bin/cat2 && echo new > /data/planted && mkdir /opq/sub &&
			echo evil >> /etc/passwd'
		assert_status 0
		edr_run run "$r" --root -- sh -c 'chown 0:0 /data/keep && echo ok'
		assert_output ok
	done
	assert_equal "$(layers_snapshot)" "$before"
	edr create h --from "oci:$T/img:t" --quiet
	edr_run run h -- sh -c 'echo "$(cat /data/keep)"; ls /data; echo "$(tail -c 4 /big)"
		cat /etc/os-release >/dev/null && echo os'
	assert_status 0
	assert_output "keep
keep
$(tail -c 4 "$T/big.txt")
os"
}

# overlay_xattrs DIR: every user.overlay.* or trusted.overlay.* attribute of the tree DIR,
# one "PATH NAME" a line.
overlay_xattrs() {
	python3 - "$1" <<-'EOF'
	import os, sys
	for d, dirs, files in os.walk(sys.argv[1]):
	    for n in [d] + [os.path.join(d, f) for f in dirs + files]:
	        try:
	            names = os.listxattr(n, follow_symlinks=False)
	        except OSError:
	            continue
	        for x in names:
	            if x.startswith(("user.overlay.", "trusted.overlay.")):
	                print(n, x)
	EOF
}

@test "layers: an overlay root of a layer marking a directory opaque or redirected (user.overlay.*) shows the lower layer's files; no stored layer keeps a mark" {
	overlay_roots
	python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.probe", b"1")' "$T" 2>/dev/null ||
		skip "this filesystem takes no user.* attributes"
	image "$T/img" >/dev/null <<-EOF
	{"tag": "x", "layers": [$BASE_LAYER,
	 {"entries": [{"path": "d", "type": "dir"}, {"path": "d/lower", "data": "lower"},
	              {"path": "r", "type": "dir"}, {"path": "r/elsewhere", "data": "r"}]},
	 {"entries": [{"path": "d", "type": "dir", "xattrs": {"user.overlay.opaque": "79"}},
	              {"path": "d/upper", "data": "upper"},
	              {"path": "e", "type": "dir", "xattrs": {"user.overlay.redirect": "2f72",
	                                                      "trusted.overlay.redirect": "2f72"}},
	              {"path": "m", "data": "m", "xattrs": {"user.overlay.metacopy": ""}}]}]}
	EOF
	edr create o --overlay --from "oci:$T/img:x" --quiet
	edr create f --keep-layers --from "oci:$T/img:x" --quiet
	local r
	for r in o f; do
		edr_run run "$r" -- sh -c 'ls /d; echo -; ls /e; echo -; cat /m'
		assert_status 0
		assert_output "lower
upper
-
-
m"
	done
	[[ $(layer_count) -eq 3 ]] || fail "expected the 3 layers stored, got $(layer_count)"
	run overlay_xattrs "$(layers_dir)"
	assert_output ""
}

@test "layers: cache list names the roots using each layer; cache clean keeps those in use and removes the rest" {
	two_layer_image "$T/img" >/dev/null
	image "$T/img2" <<< "{\"tag\": \"o\", \"layers\": [$BASE_LAYER, {\"entries\": [{\"path\": \"only\", \"data\": \"o\"}]}]}" >/dev/null
	overlay_roots
	edr create a --overlay --from "oci:$T/img:t" --quiet
	edr create b --from "oci:$T/img:t" --quiet
	edr create o --overlay --from "oci:$T/img2:o" --quiet
	assert_equal "$(layer_count)" 4
	run "$EDR_BIN" cache list
	assert_success
	# The base layer is used by all three roots, img's own by a and b, img2's by o.
	assert_line --regexp "^[0-9a-f]{64} +[0-9]+  layer, used by: a b o\$"
	run grep -c "layer, used by: a b\$" <<< "$output"
	assert_output 2
	run "$EDR_BIN" cache list --json
	assert_success
	python3 -c 'import json,sys; l=[e for e in json.load(sys.stdin) if "layer" in e]; assert len(l)==4, l; assert sorted(len(e["roots"]) for e in l)==[1,2,2,3], l' <<< "$output"
	# remove leaves the layers; cache clean removes only the one no root uses any more.
	edr remove o
	assert_equal "$(layer_count)" 4
	run "$EDR_BIN" cache clean
	assert_success
	assert_output --partial "1 unused layer"
	assert_equal "$(layer_count)" 3
	edr_run run a -- cat /opq/new
	assert_output new
	edr remove a b
	run "$EDR_BIN" cache clean
	assert_success
	assert_output --partial "3 unused layers"
	assert_equal "$(layer_count)" 0
}

@test "layers: a plain tarball is one layer, unpacked once: a second create finds it by the file's digest" {
	overlay_roots
	edr create a --overlay --from "$EDR_TEMPLATE"
	assert_equal "$(layer_count)" 1
	local l ino
	l=$(ls "$(layers_dir)")
	ino=$(stat -c %i "$(layers_dir)/$l/tree")
	# The diff_id is the uncompressed tar's digest.
	assert_equal "$l" "$(gzip -dc "$EDR_TEMPLATE" | sha256sum | cut -d' ' -f1)"
	edr create b --from "$EDR_TEMPLATE"
	assert_equal "$(layer_count)" 1
	assert_equal "$(stat -c %i "$(layers_dir)/$l/tree")" "$ino"
	# The same tar compressed otherwise is the same layer, and the same tree.
	gzip -dc "$EDR_TEMPLATE" | zstd -q -o "$T/t.tar.zst"
	edr create c --from "$T/t.tar.zst"
	assert_equal "$(layer_count)" 1
	diff <(tree_listing "$(root_of b)") <(tree_listing "$(root_of c)") || fail "c differs from b"
}

@test "layers: two creates of one image at once both succeed and leave one copy of each layer" {
	overlay_roots
	two_layer_image "$T/img" >/dev/null
	"$EDR_BIN" create a --overlay --from "oci:$T/img:t" --quiet 2> "$T/a.err" & local pa=$!
	"$EDR_BIN" create b --overlay --from "oci:$T/img:t" --quiet 2> "$T/b.err" & local pb=$!
	wait "$pa" || fail "create a failed: $(cat "$T/a.err")"
	wait "$pb" || fail "create b failed: $(cat "$T/b.err")"
	assert_equal "$(layer_count)" 3
	run find "$XDG_CACHE_HOME/enter-devroot/layers" -maxdepth 1 -name '.*' ! -name .
	assert_output ""
	edr_run run a -- sh -c 'cat /opq/new; echo; ls /data'
	assert_output "new
keep"
	edr_run run b -- sh -c 'cat /opq/new; echo; ls /data'
	assert_output "new
keep"
}

@test "layers: where the filesystem cannot clone, a flat root of an image none of whose layers is stored is unpacked straight, and is the tree a copy from the store is" {
	echo x > "$T/probe"
	if cp --reflink=always "$T/probe" "$T/probe2" 2>/dev/null; then
		skip "this filesystem clones by reference: a flat create stores the layers"
	fi
	two_layer_image "$T/img" >/dev/null
	edr create straight --from "oci:$T/img:t" --quiet
	assert_equal "$(layer_count)" 0
	overlay_roots
	edr create o --overlay --from "oci:$T/img:t" --quiet
	assert_equal "$(layer_count)" 3
	edr create copied --from "oci:$T/img:t" --quiet
	# Directory times aside: a layer's tree gets the unpack's time on a directory it only
	# implies (data/ of the whiteout's layer), which a copy takes as the topmost one's; the
	# straight root keeps the time of the layer that listed it, as docker and podman do.
	local listing='(cd "$1" && find . -printf "%y %m %s %l %p\n" | sort -k5 |
		grep -Ev " \./(home|home/[^/]*|etc|etc/passwd|etc/group)$";
		find . ! -type d -printf "%T@ %p\n" | sort -k2 | grep -Ev " \./etc/(passwd|group)$")'
	diff <(bash -c "$listing" _ "$(root_of straight)") <(bash -c "$listing" _ "$(root_of copied)") ||
		fail "the straight root differs from the copied one"
	assert_equal "$(grep -o '"layers": \[[^]]*\]' "$XDG_DATA_HOME/enter-devroot/meta/straight.json")" \
		"$(grep -o '"layers": \[[^]]*\]' "$XDG_DATA_HOME/enter-devroot/meta/copied.json")"
}

# has_xattr FILE NAME: FILE carries the extended attribute NAME.
has_xattr() {
	python3 -c 'import os,sys; os.getxattr(sys.argv[1], sys.argv[2], follow_symlinks=False)' "$1" "$2" 2>/dev/null
}

@test "layers: a layer entry's user.overlay.* or trusted.overlay.* xattrs are dropped with one warning, never in the layer" {
	python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.probe", b"1")' "$T" 2>/dev/null ||
		skip "this filesystem takes no user.* attributes"
	local x n=0
	for x in user.overlay.opaque user.overlay.origin trusted.overlay.redirect; do
		rm -rf "$T/img"
		n=$((n + 1))
		image "$T/img" <<-EOF >/dev/null
		{"tag": "x", "layers": [$BASE_LAYER,
		 {"entries": [{"path": "d$n", "type": "dir", "xattrs": {"$x": "79"}}, {"path": "d$n/f", "data": "f"}]}]}
		EOF
		# --keep-layers: the layers are stored on every filesystem, for the check below.
		edr_run create "x$n" --keep-layers --from "oci:$T/img:x" --quiet
		assert_status 0
		[[ $(layer_count) -gt 0 ]] || fail "no layer stored to check"
		[[ $stderr == *"dropped extended attribute(s): 1 (first $x on 'd$n"* ]] || fail "not the one warning: $(last_run)"
		# Not in the layer an overlay would stack (its d would be opaque, or redirected), nor
		# in the root; the directory's own file is there.
		local tree
		for tree in "$(layers_dir)"/*/tree; do
			[[ ! -e $tree/d$n ]] || ! has_xattr "$tree/d$n" "$x" || fail "$x kept in the layer $tree"
		done
		! has_xattr "$(root_of "x$n")/d$n" "$x" || fail "$x in the root"
		assert_equal "$(cat "$(root_of "x$n")/d$n/f")" f
	done
	# In a plain tarball too (a one-layer image).
	mkdir -p "$T/t/d"
	python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.overlay.opaque", b"y")' "$T/t/d" 2>/dev/null ||
		skip "cannot set user.overlay.* here"
	tar --xattrs --xattrs-include='*' -C "$T/t" -cf "$T/t.tar" .
	edr_run create y --keep-layers --from "$T/t.tar"
	assert_status 0
	[[ -d $(layers_dir)/$(sha256sum < "$T/t.tar" | cut -d' ' -f1)/tree ]] ||
		fail "the tarball's layer was not stored to check"
	for tree in "$(layers_dir)"/*/tree; do
		[[ ! -e $tree/d ]] || ! has_xattr "$tree/d" user.overlay.opaque || fail "kept in the layer $tree"
	done
}
