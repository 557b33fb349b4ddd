# Registries for the OCI suites, on 127.0.0.1 only, on ports chosen at run time:
#   start_registry NAME [htpasswd|token]   Debian's docker-registry (distribution 2.8)
#                                    with TLS from the suite's CA; with htpasswd, basic auth
#                                    for user edr / password "right pass"; with token,
#                                    Bearer tokens from token-server.py (anonymous pulls
#                                    of public/*, everything for edr)
#   start_proxy NAME REGISTRY        upload-proxy.py with TLS in front of registry REGISTRY,
#                                    refusing what $S/NAME.mode says (pass at first)
#   push LAYOUT:TAG NAME REPO:TAG [USER:PASS]   skopeo copy into it
#   static_registry LAYOUT TAG REPO  the image as files under $WWW/v2/REPO/ for
#                                    tests/fetch/server.py (plain http): a registry that
#                                    serves whatever bytes a test puts there
# Every registry logs its requests to $S/NAME.log; stop_registries stops them by PID.

REG_USER=edr
REG_PASS='right pass'

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_registry() { # NAME [htpasswd|token|plain]: sets $S/NAME.port (plain: http, no TLS)
	local name=$1 auth=${2:-} port dir
	command -v docker-registry >/dev/null || { echo "docker-registry is needed (apt-get install docker-registry)" >&2; return 1; }
	dir=$S/$name
	mkdir -p "$dir/data"
	port=$(free_port)
	{
		echo "version: 0.1"
		echo "log: {level: info, accesslog: {disabled: false}}"
		echo "storage: {filesystem: {rootdirectory: $dir/data}, delete: {enabled: true}}"
		if [[ $auth == plain ]]; then
			echo "http: {addr: 127.0.0.1:$port}"
		else
			echo "http: {addr: 127.0.0.1:$port, tls: {certificate: $S/server.pem, key: $S/server.key}}"
		fi
		if [[ $auth == htpasswd ]]; then
			htpasswd -Bbn "$REG_USER" "$REG_PASS" > "$dir/htpasswd"
			echo "auth: {htpasswd: {realm: edr-test, path: $dir/htpasswd}}"
		elif [[ $auth == token ]]; then
			start_token_server "$name-token" || return 1
			echo "auth: {token: {realm: 'https://127.0.0.1:$(cat "$S/$name-token.port")/token'," \
				"service: edr-registry, issuer: edr-issuer, rootcertbundle: $S/token.pem}}"
		fi
	} > "$dir/config.yml"
	docker-registry serve "$dir/config.yml" > "$S/$name.log" 2>&1 &
	echo $! > "$S/$name.pid"
	echo "$port" > "$S/$name.port"
	local i
	for i in $(seq 100); do
		if [[ $auth == plain ]]; then
			curl -s -o /dev/null "http://127.0.0.1:$port/v2/" && return 0
		else
			curl -s -o /dev/null --cacert "$S/ca.pem" "https://127.0.0.1:$port/v2/" && return 0
		fi
		sleep 0.1
	done
	cat "$S/$name.log" >&2
	return 1
}

# wait_port_file NAME: until server NAME wrote $S/NAME.port; else its errors, and 1.
wait_port_file() {
	local i
	for i in $(seq 100); do
		[[ -s $S/$1.port ]] && return 0
		sleep 0.1
	done
	cat "$S/$1.err" >&2
	return 1
}

start_token_server() { # NAME: its key and certificate, then the service; $S/NAME.port
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=edr-token \
		-keyout "$S/token.key" -out "$S/token.pem" 2>/dev/null || return 1
	python3 "$BATS_TEST_DIRNAME/token-server.py" --tls "$S/server.pem" "$S/server.key" \
		--sign-key "$S/token.key" --sign-cert "$S/token.pem" --port-file "$S/$1.port" \
		--log "$S/$1.log" --user "$REG_USER:$REG_PASS" 2> "$S/$1.err" &
	echo $! > "$S/$1.pid"
	wait_port_file "$1"
}

start_proxy() { # NAME REGISTRY: sets $S/NAME.port, $S/NAME.mode, logs to $S/NAME.log
	echo pass > "$S/$1.mode"
	python3 "$BATS_TEST_DIRNAME/upload-proxy.py" --tls "$S/server.pem" "$S/server.key" \
		--ca "$S/ca.pem" --target "$(reg "$2")" --mode-file "$S/$1.mode" \
		--port-file "$S/$1.port" --log "$S/$1.log" 2> "$S/$1.err" &
	echo $! > "$S/$1.pid"
	wait_port_file "$1"
}

stop_registries() {
	local p
	for p in "$S"/*.pid; do
		# One already gone (a test stopped it) must not end the loop under errexit.
		[[ ! -f $p ]] || kill "$(cat "$p")" 2>/dev/null || true
	done
}

reg() { echo "127.0.0.1:$(cat "$S/$1.port")"; } # NAME: HOST:PORT

push() { # LAYOUT:TAG NAME REPO:TAG [USER:PASS]
	mkdir -p "$S/certs"
	cp "$S/ca.pem" "$S/certs/ca.crt"
	local creds=()
	[[ -z ${4:-} ]] || creds=(--dest-creds "$4")
	[[ $(grep -c 'tls:' "$S/$2/config.yml") -gt 0 ]] || creds+=(--dest-tls-verify=false)
	timeout 60 skopeo copy -q --all --dest-cert-dir "$S/certs" "${creds[@]}" \
		"oci:$1" "docker://$(reg "$2")/$3"
}

# blob_gets NAME HEX: how many GETs of blob sha256:HEX registry NAME answered.
blob_gets() { grep -c "\"GET /v2/[^ ]*/blobs/sha256:$2 " "$S/$1.log" || true; }

# auth_file FILE HOST USER:PASS: an auth file as docker login and podman login write.
auth_file() {
	printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$2" "$(printf %s "$3" | base64 -w0)" > "$1"
}

static_registry() { # LAYOUT TAG REPO
	python3 - "$@" "$WWW" <<-'EOF'
	import json, os, shutil, sys
	layout, tag, repo, www = sys.argv[1:5]
	base = os.path.join(www, "v2", repo)
	os.makedirs(os.path.join(base, "blobs"), exist_ok=True)
	os.makedirs(os.path.join(base, "manifests"), exist_ok=True)
	for b in os.listdir(os.path.join(layout, "blobs", "sha256")):
	    src = os.path.join(layout, "blobs", "sha256", b)
	    shutil.copy(src, os.path.join(base, "blobs", "sha256:" + b))
	    shutil.copy(src, os.path.join(base, "manifests", "sha256:" + b))
	index = json.load(open(os.path.join(layout, "index.json")))
	for m in index["manifests"]:
	    if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag:
	        shutil.copy(os.path.join(layout, "blobs", "sha256", m["digest"][7:]),
	                    os.path.join(base, "manifests", tag))
	EOF
}
