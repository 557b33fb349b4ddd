/* CDI device names (see cdi-name.h). Nothing here allocates or dies: the SPANK plugin
 * checks --devroot-device with it inside slurmstepd. */
#include <stdbool.h>
#include <string.h>

#include "common/cdi-name.h"

static bool
is_letter (char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool
is_alnum (char c)
{
  return is_letter (c) || (c >= '0' && c <= '9');
}

/* S[0..LEN): FIRST_LETTER says whether it must start with a letter (else a letter or
 * digit); MIDDLE the punctuation allowed between its first and last characters, which are
 * letters or digits. */
static int
name_check (const char *s, size_t len, size_t max, bool first_letter, const char *middle,
            const char **why)
{
  if (len == 0)
    {
      *why = "empty";
      return -1;
    }
  if (len > max)
    {
      *why = "too long";
      return -1;
    }
  if (first_letter ? !is_letter (s[0]) : !is_alnum (s[0]))
    {
      *why = first_letter ? "does not start with a letter" : "does not start with a letter or digit";
      return -1;
    }
  if (!is_alnum (s[len - 1]))
    {
      *why = "does not end with a letter or digit";
      return -1;
    }
  for (size_t i = 1; i + 1 < len; i++)
    if (!is_alnum (s[i]) && (s[i] == '\0' || strchr (middle, s[i]) == NULL))
      {
        *why = "holds a character other than letters, digits and the punctuation allowed";
        return -1;
      }
  return 0;
}

int
cdi_vendor_check (const char *vendor, size_t len, const char **why)
{
  return name_check (vendor, len, CDI_VENDOR_MAX, true, "-_.", why);
}

int
cdi_class_check (const char *class, size_t len, const char **why)
{
  return name_check (class, len, CDI_NAME_MAX, true, "-_.", why);
}

int
cdi_name_check (const char *name, size_t len, const char **why)
{
  return name_check (name, len, CDI_NAME_MAX, false, "-_.:", why);
}

int
cdi_device_name_check (const char *device, const char **why)
{
  const char *slash = strchr (device, '/');
  const char *eq = strchr (device, '=');
  if (slash == NULL || eq == NULL || eq < slash)
    {
      *why = "expected VENDOR/CLASS=NAME, as nvidia.com/gpu=0 or nvidia.com/gpu=all";
      return -1;
    }
  const char *part_why;
  if (cdi_vendor_check (device, (size_t) (slash - device), &part_why) < 0)
    *why = "its VENDOR (before the '/') is not a name: letters, digits, '-', '_' and '.', "
           "starting with a letter, ending with a letter or digit";
  else if (cdi_class_check (slash + 1, (size_t) (eq - slash - 1), &part_why) < 0)
    *why = "its CLASS (between '/' and '=') is not a name: letters, digits, '-', '_' and '.', "
           "starting with a letter, ending with a letter or digit";
  else if (cdi_name_check (eq + 1, strlen (eq + 1), &part_why) < 0)
    *why = "its NAME (after the '=') is not a device name: letters, digits, '-', '_', '.' and "
           "':', starting and ending with a letter or digit";
  else
    return 0;
  return -1;
}

