# Debian's nginx as the real peer for the fetch suites. Load after common: `load nginx`.
#
# nginx_setup_file starts one unprivileged nginx (daemon off, in the background) on
# 127.0.0.1 with two random free ports, plain HTTP and HTTPS with a certificate from a CA
# generated for the run, both serving $WWW. Its configuration, pid file, error log and temp
# paths all live in $S/nginx. Every request is logged to $S/http.log or $S/https.log as
#   GET /path HTTP/1.1 status=200 sent=1234 range=bytes=10- if-range="etag"
# ($request $status $body_bytes_sent $http_range $http_if_range; "-" for a missing header),
# the format of tests/fetch/server.py, so common.bash's http_log and http_count work as is.
#
# Suites use nginx_setup_file/nginx_teardown_file and, per test, nginx_setup (fetch_setup,
# or a skip naming the missing package: bats 1.8 cannot skip from setup_file).
# serve_dir DIR serves one directory, nothing else (the --root suites' apt repository).
#
# Locations besides the plain files under $WWW:
#   /slow/F       $WWW/F, at NGINX_SLOW_RATE bytes/s unless the request has a Range header
#   /err500/F     500 Internal Server Error
#   /to-file/F    302 to file:///etc/passwd

NGINX_SLOW_RATE=2097152

nginx_bin() {
	command -v nginx 2>/dev/null ||
		{ [[ -x /usr/sbin/nginx ]] && echo /usr/sbin/nginx; }
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The start of every configuration, up to inside its http block: one process in the
# foreground, and everything nginx writes stays in $S/nginx.
nginx_conf_top() {
	local n=$S/nginx
	cat <<EOF
worker_processes 1;
daemon off;
pid $n/nginx.pid;
error_log $n/error.log notice;
events { worker_connections 64; }
http {
	default_type application/octet-stream;
	client_body_temp_path $n/tmp/body;
	proxy_temp_path $n/tmp/proxy;
	fastcgi_temp_path $n/tmp/fastcgi;
	uwsgi_temp_path $n/tmp/uwsgi;
	scgi_temp_path $n/tmp/scgi;
EOF
}

nginx_conf() { # HTTP_PORT HTTPS_PORT
	local n=$S/nginx
	cat <<EOF
$(nginx_conf_top)
	log_format edr escape=none
		'\$request status=\$status sent=\$body_bytes_sent range=\$edr_range if-range=\$edr_if_range';
	# escape=none logs a missing header as nothing; server.py's format says "-".
	map \$http_range \$edr_range { "" "-"; default \$http_range; }
	map \$http_if_range \$edr_if_range { "" "-"; default \$http_if_range; }
	# The first request for /slow/F is throttled, so a client can be killed mid-body; the
	# resumed (ranged) one is not.
	map \$http_range \$edr_slow_rate {
		"" $NGINX_SLOW_RATE;
		default 0;
	}
	server {
		listen 127.0.0.1:$1;
		access_log $S/http.log edr;
		include $n/locations.conf;
	}
	server {
		listen 127.0.0.1:$2 ssl;
		ssl_certificate $S/server.pem;
		ssl_certificate_key $S/server.key;
		access_log $S/https.log edr;
		include $n/locations.conf;
	}
}
EOF
}

nginx_locations() {
	cat <<EOF
root $WWW;
location ^~ /slow/ {
	alias $WWW/;
	limit_rate \$edr_slow_rate;
}
location ^~ /err500/ { return 500; }
location ^~ /to-file/ { return 302 file:///etc/passwd; }
EOF
}

# Start nginx on fresh ports; a port taken between free_port and bind is retried.
nginx_start() {
	local n=$S/nginx try
	mkdir -p "$n/tmp"
	nginx_locations > "$n/locations.conf"
	for try in 1 2 3; do
		HTTP_PORT=$(free_port)
		HTTPS_PORT=$(free_port)
		[[ $HTTP_PORT != "$HTTPS_PORT" ]] || continue
		nginx_conf "$HTTP_PORT" "$HTTPS_PORT" > "$n/nginx.conf"
		nginx_launch "$HTTP_PORT" "$HTTPS_PORT" && return 0
	done
	nginx_failed
}

# nginx_launch PORT...: start nginx on $S/nginx/nginx.conf and wait until it answers on
# every PORT of 127.0.0.1; stopped again (status 1) when it does not.
nginx_launch() {
	local n=$S/nginx i p up
	rm -f "$n/nginx.pid"
	"$(nginx_bin)" -p "$n" -c "$n/nginx.conf" -e "$n/error.log" > "$n/stdout" 2>&1 3>&- &
	echo $! > "$n/master.pid"
	for i in $(seq 100); do
		kill -0 "$(cat "$n/master.pid")" 2>/dev/null || break
		up=0
		if [[ -s $n/nginx.pid ]]; then
			up=1
			for p; do (exec 9<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null || up=0; done
		fi
		[[ $up -eq 0 ]] || return 0
		sleep 0.1
	done
	nginx_stop
	return 1
}

nginx_failed() {
	echo "nginx did not start:" >&2
	cat "$S/nginx/stdout" "$S/nginx/error.log" >&2 2>/dev/null
	return 1
}

nginx_stop() {
	local n=$S/nginx pid i
	[[ -f $n/master.pid ]] || return 0
	pid=$(cat "$n/master.pid")
	kill -TERM "$pid" 2>/dev/null
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	rm -f "$n/master.pid"
	true
}

# serve_dir DIR: nginx on 127.0.0.1 and a free port serving DIR; sets SERVE_URL. $S/nginx
# holds its configuration, logs and pid (nginx_stop stops it by that pid).
serve_dir() {
	local n=$S/nginx try port
	[[ -n $(nginx_bin) ]] || { echo "nginx is not installed (apt-get install nginx)" >&2; return 1; }
	mkdir -p "$n/tmp"
	for try in 1 2 3; do
		port=$(free_port)
		cat > "$n/nginx.conf" <<CONF
$(nginx_conf_top)
	access_log $n/access.log;
	server {
		listen 127.0.0.1:$port;
		root $1;
	}
}
CONF
		if nginx_launch "$port"; then
			SERVE_URL=http://127.0.0.1:$port
			return 0
		fi
	done
	nginx_failed
}

nginx_setup_file() {
	fetch_check_prerequisites || return 1
	# bats 1.8 cannot skip from setup_file: nginx_setup skips each test instead.
	export NGINX_MISSING=
	if [[ -z $(nginx_bin) ]]; then
		NGINX_MISSING="nginx is not installed (apt-get install nginx)"
		return 0
	fi
	fetch_prepare_site || return 1
	nginx_start || return 1
	fetch_publish_template
}

nginx_teardown_file() {
	if [[ -n ${S:-} ]]; then nginx_stop; fi
}

nginx_setup() { # per test, instead of fetch_setup
	[[ -z $NGINX_MISSING ]] || skip "$NGINX_MISSING"
	fetch_setup
}
