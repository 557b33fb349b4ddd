/* Undoing the Actions runner's quoting of a step's arguments.
 *
 * The runner hands a hook each step's arguments as one string split on spaces
 * (HookInput.cs: `.Split(' ')`, each piece trimmed, empty pieces dropped). For a container
 * action the string is the action's `args:`, each wrapped in double quotes with its own
 * double quotes escaped (ContainerActionHandler.cs: ` "a1" "a2"`), or a docker:// step's
 * `args` input as the workflow wrote it; for a JavaScript action, the script's path in
 * double quotes (NodeScriptActionHandler.cs). So `hello world` arrives as ["\"hello",
 * "world\""]. The reference docker hook undoes it with shlex.split of the pieces joined
 * by spaces (runner-container-hooks packages/docker/src/utils.ts fixArgs, the npm shlex
 * package, a port of Python's shlex in POSIX mode); ci_shlex_split does the same:
 *
 *   - words are separated by spaces, tabs, carriage returns and newlines outside quotes;
 *   - '...' is literal to the next ';
 *   - "..." is literal except that \" and \\ lose their backslash and a backslash before a
 *     newline drops both; any other backslash is kept;
 *   - outside quotes a backslash quotes the next character (before a newline, drops both);
 *   - $'...' takes bash's ANSI-C escapes: \a \b \e \E \f \n \r \t \v \\ \' \" \?, \NNN
 *     (octal), \xHH, \uHHHH and \UHHHHHHHH (written as UTF-8), \cX; any other backslash
 *     is kept; $"..." is "..." (no translation);
 *   - quoted and unquoted parts next to each other make one word; "" alone is an empty
 *     word.
 * An unterminated quote, a backslash at the very end, or an escape that makes a NUL byte or
 * no Unicode character is an error.
 *
 * What the runner's format loses is lost here as in the docker hook: a run of spaces inside
 * an argument becomes one space and whitespace next to a space disappears (the split and
 * trim), and since the runner escapes only double quotes, a backslash before a backslash or
 * a double quote in an argument is dropped, and one ending an argument escapes its closing
 * quote.
 *
 * The npm package (shlex 3.0.0) applies a closing quote's escapes again to the whole word
 * so far, so it halves backslashes before a quoted part of a word once more; this does
 * not. Compared on random inputs (not in the test suite), the two agree on every input
 * without a backslash, and on every runner string whose arguments have no backslash right
 * before a double quote or at their end, the arguments the runner's format breaks anyway. */
#pragma once

/* The words of TEXT, a NULL-terminated vector (owned; strv_free), or NULL with *WHY set to
 * a static message. */
char **ci_shlex_split (const char *text, const char **why);
