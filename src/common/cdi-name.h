/* CDI device names, VENDOR/CLASS=NAME (the Container Device Interface's fully qualified
 * names): what --device, --devroot-device and a spec's kind and device names must be. */
#pragma once

#include <stddef.h>

/* The spec's lengths for the parts of a fully qualified device name (SPEC.md, Kind): a
 * vendor is a DNS subdomain, a class and a device name at most 63 characters. */
#define CDI_VENDOR_MAX 253
#define CDI_NAME_MAX 63

/* VENDOR/CLASS=NAME as podman takes it (the CDI's ParseQualifiedName): a vendor and a class
 * of letters, digits, '-', '_' and '.', starting with a letter and ending with a letter or
 * digit; a name of letters, digits, '-', '_', '.' and ':', starting and ending with a letter
 * or digit. 0, or -1 with *WHY (static text) naming the part at fault. */
int cdi_device_name_check (const char *device, const char **why);
/* The same checks on the parts alone (a spec's kind and device names). */
int cdi_vendor_check (const char *vendor, size_t len, const char **why);
int cdi_class_check (const char *class, size_t len, const char **why);
int cdi_name_check (const char *name, size_t len, const char **why);
