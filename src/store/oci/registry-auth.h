/* A registry's credentials and the answer to its authentication challenges, for pulling
 * (registry.c) and pushing (registry-upload.c). */
#pragma once

#include <stdbool.h>

#include "store/oci/oci.h"

struct registry_auth
{
  char *registry;      /* HOST[:PORT], whose credentials these are */
  char *repository;    /* the default token scope's repository */
  const char *cacert;
  bool insecure_http;
  char *basic;         /* base64 "user:password" from an auth file, or NULL */
  char *authorization; /* "Authorization: ..." once a challenge was answered, or NULL */
};

/* The "auth" entry for REGISTRY in $REGISTRY_AUTH_FILE, else ~/.docker/config.json; NULL
 * when there is none. dies naming a broken file. */
char *registry_find_credentials (const char *registry);

void registry_auth_init (struct registry_auth *a, const char *registry, const char *repository,
                         const struct oci_opts *o);
void registry_auth_clear (struct registry_auth *a);

/* Answer the WWW-Authenticate CHALLENGE of a 401: a Bearer token fetched from its realm
 * (for SCOPES, a NULL-terminated list, when not NULL; else the challenge's own scope, else
 * pull on the repository), or the basic credentials. Sets a->authorization; dies with one
 * line naming WHAT when it cannot. */
void registry_auth_answer (struct registry_auth *a, const char *what, const char *challenge,
                           const char *const *scopes);
