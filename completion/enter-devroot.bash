# bash completion for enter-devroot(1): subcommands, their options, root and template
# names. Loaded by Debian's bash-completion package (apt-get install bash-completion),
# from /usr/local/share or ~/.local/share/bash-completion/completions, in a new shell.
# The "name" of each object of a --json listing (list, templates), one per line.
_enter_devroot_names()
{
	sed -n 's/^  {"name": "\([A-Za-z0-9._-]*\)".*/\1/p'
}

_enter_devroot_roots()
{
	enter-devroot list --json 2>/dev/null | _enter_devroot_names
}

# The configured catalogue's templates and the built-in ones (a catalogue that cannot be
# reached gives the built-in ones, or nothing, rather than a wait: at most 5 seconds).
_enter_devroot_templates()
{
	timeout 5 enter-devroot templates --json 2>/dev/null | _enter_devroot_names
}

_enter_devroot()
{
	local cur prev words cword
	_init_completion 2>/dev/null || {
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	}
	local subcommands="create enter run list images path remove templates fetch cache export push publish doctor gitlab github-hook help"

	# -v/--verbose comes before the subcommand: complete the rest as if it were not there.
	while [[ $cword -gt 1 && ( ${words[1]} == -v || ${words[1]} == --verbose ) ]]; do
		words=("${words[0]}" "${words[@]:2}")
		cword=$((cword - 1))
	done
	if [[ $cword -eq 1 ]]; then
		COMPREPLY=($(compgen -W "$subcommands --help --version -v --verbose" -- "$cur"))
		return
	fi

	local sub=${words[1]} i
	# After "run NAME ... --", complete commands and files as for any command line.
	if [[ $sub == run ]]; then
		for ((i = 2; i < cword; i++)); do
			if [[ ${words[i]} == -- ]]; then
				COMPREPLY=($(compgen -c -- "$cur"))
				return
			fi
		done
	fi

	case $prev in
	--from)
		# Files, and the image transports (docker://, oci:DIR, docker-archive:FILE).
		COMPREPLY=($(compgen -f -- "$cur"))
		[[ $cur == *[:/]* ]] || COMPREPLY+=($(compgen -W "docker:// oci: docker-archive:" -- "$cur"))
		compopt -o filenames 2>/dev/null; return ;;
	--cacert) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
	--bind|--save) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
	--allow-volume) COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null; return ;;
	--step-user) COMPREPLY=($(compgen -W "image root runner" -- "$cur")); return ;;
	--template) COMPREPLY=($(compgen -W "$(_enter_devroot_templates)" -- "$cur")); return ;;
	--workdir|--sha256|--env|--env-fd|--index|--timeout|--max-size|--device) return ;;
	--platform) COMPREPLY=($(compgen -W "linux/amd64 linux/arm64 linux/arm/v7 linux/386 linux/ppc64le linux/s390x linux/riscv64" -- "$cur")); return ;;
	--mode) COMPREPLY=($(compgen -W "auto chroot userns" -- "$cur")); return ;;
	--compress) COMPREPLY=($(compgen -W "zstd gzip xz none" -- "$cur")); return ;;
	--description) return ;;
	esac

	local opts=""
	case $sub in
	create) opts="--from --template --sha256 --no-verify --max-size --index --cacert --quiet --platform --insecure-http --flat --overlay --keep-layers --help" ;;
	templates) opts="--index --json --cacert --help" ;;
	fetch) opts="--index --cacert --quiet --help" ;;
	cache)
		[[ $cword -eq 2 ]] && { COMPREPLY=($(compgen -W "list clean" -- "$cur")); return; }
		opts="--json --quiet --help" ;;
	export) opts="--compress --quiet --help" ;;
	publish) opts="--description --quiet --help" ;;
	push) opts="--cacert --insecure-http --quiet --help" ;;
	enter) opts="--workdir --env --env-fd --clear-env --mode --no-landlock --no-host-dns --root --bind --device --timeout --help" ;;
	run)
		opts="--workdir --env --env-fd --clear-env --mode --no-landlock --no-host-dns --root --entrypoint --bind
		--device --timeout --help"
		# The throwaway root's options, until a NAME says the root is a named one.
		local named= ephemeral=
		for ((i = 2; i < cword; i++)); do
			case ${words[i]}:${words[i - 1]} in
			--ephemeral:*) ephemeral=1 ;;
			-*:* | *:--workdir | *:--env | *:--env-fd | *:--mode | *:--bind | *:--device | *:--timeout | *:--name | *:--save | \
				*:--from | *:--template | *:--sha256 | *:--max-size | *:--index | *:--cacert | *:--platform) ;;
			*) named=1 ;;
			esac
		done
		[[ -n $named && -z $ephemeral ]] && opts+=" --" ||
			opts+=" --ephemeral --name --save --from --template --sha256 --no-verify --max-size --index
			--cacert --platform --insecure-http --quiet"
		;;
	list|images) opts="--json --help" ;;
	remove) opts="--force --help" ;;
	path|doctor) opts="--help" ;;
	gitlab)
		[[ $cword -eq 2 ]] && { COMPREPLY=($(compgen -W "config prepare run cleanup" -- "$cur")); return; }
		opts="--builds-dir --cache-dir --default-image --mode --cacert --insecure-http --allow-local-images
			--allow-root --device" ;;
	github-hook) opts="--mode --cacert --insecure-http --allow-volume --step-user --allow-local-images --allow-root --device --help" ;;
	help) COMPREPLY=($(compgen -W "$subcommands" -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	case $sub in
	publish)
		COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null ;;
	export)
		# NAME, then FILE.
		local words_seen=0
		for ((i = 2; i < cword; i++)); do
			case ${words[i]}:${words[i - 1]} in
			-*:* | *:--compress) ;;
			*) words_seen=$((words_seen + 1)) ;;
			esac
		done
		if [[ $words_seen -eq 0 ]]; then
			COMPREPLY=($(compgen -W "$(_enter_devroot_roots)" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null
		fi
		;;
	push)
		# NAME, then docker://REGISTRY/REPO:TAG, oci:DIR:TAG or docker-archive:FILE[:REPO:TAG].
		local words_seen=0
		for ((i = 2; i < cword; i++)); do
			case ${words[i]}:${words[i - 1]} in
			-*:* | *:--cacert) ;;
			*) words_seen=$((words_seen + 1)) ;;
			esac
		done
		if [[ $words_seen -eq 0 ]]; then
			COMPREPLY=($(compgen -W "$(_enter_devroot_roots)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "docker:// oci: docker-archive:" -- "$cur")); compopt -o nospace 2>/dev/null
		fi
		;;
	remove) COMPREPLY=($(compgen -W "$(_enter_devroot_roots)" -- "$cur")) ;; # every word is one
	fetch) COMPREPLY=($(compgen -W "$(_enter_devroot_templates)" -- "$cur")) ;;
	enter|run|path)
		# Only the first non-option word is a root name.
		local have_name=
		for ((i = 2; i < cword; i++)); do
			case ${words[i]}:${words[i - 1]} in
			-*:* | *:--workdir | *:--env | *:--env-fd | *:--mode) ;;
			*) have_name=1 ;;
			esac
		done
		[[ -n $have_name ]] || COMPREPLY=($(compgen -W "$(_enter_devroot_roots)" -- "$cur"))
		;;
	esac
}
complete -F _enter_devroot enter-devroot
