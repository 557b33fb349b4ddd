/* What download.c and download-file.c share: the libcurl handle with every option that
 * makes a transfer safe, its messages, the request and response headers. */
#pragma once

#include <curl/curl.h>
#include <stddef.h>

#include "store/cache/download.h"

/* An easy handle for URL with the options of download.h set (schemes, redirects, TLS,
 * timeouts, O's CA); messages go to ERRBUF. die()s when libcurl cannot make one. */
CURL *download_handle_new (const char *url, const struct download_opts *o,
                           char errbuf[CURL_ERROR_SIZE]);
/* libcurl's message for RC, plus what to do about it when that is not obvious (malloc'd). */
char *download_error_text (CURLcode rc, const char *errbuf, const char *url,
                           const struct download_opts *o);
/* O's extra headers, then EXTRA (may be NULL), as a list for CURLOPT_HTTPHEADER. */
struct curl_slist *download_header_list (const struct download_opts *o, const char *extra);
/* What a CURLOPT_HEADERFUNCTION line (LEN bytes, as libcurl hands it) is: a status line,
 * which starts another response (after a redirect or a 100 Continue: a callback resets
 * what it took, so that only the final response counts); header NAMES[i] (NULL-terminated
 * array), returning i with its value trimmed in *VALUE (malloc'd); or another header. */
#define DOWNLOAD_STATUS_LINE (-1)
#define DOWNLOAD_OTHER_HEADER (-2)
int download_header_parse (const char *line, size_t len, const char *const names[], char **value);
