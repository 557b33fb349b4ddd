/* src/cdi/spec.c and yaml.c (a CDI spec read and checked), common/cdi-edits.c (device names,
 * the edits format): what a valid spec gives, in JSON and in YAML alike, and for each fault
 * the one field the message names. (tests/host/devices.bats runs --device end to end.) */
#include "unit.h"

#include <stdio.h>

#include "cdi/spec.h"
#include "common/cdi-edits.h"
#include "common/util.h"

/* What nvidia-ctk cdi generate writes, cut down to one device, in both encodings. */
static const char nvidia_json[] =
  "{\"cdiVersion\":\"0.5.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[{\"name\":\"0\","
  "\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/nvidia0\"}]}}],"
  "\"containerEdits\":{\"env\":[\"NVIDIA_VISIBLE_DEVICES=void\"],"
  "\"deviceNodes\":[{\"path\":\"/dev/nvidiactl\"}],"
  "\"hooks\":[{\"hookName\":\"createContainer\",\"path\":\"/usr/bin/nvidia-cdi-hook\","
  "\"args\":[\"nvidia-cdi-hook\",\"update-ldcache\",\"--folder\",\"/usr/lib/x86_64-linux-gnu\"],"
  "\"env\":[\"NVIDIA_CTK_DEBUG=false\"]}],"
  "\"mounts\":[{\"hostPath\":\"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\","
  "\"containerPath\":\"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\","
  "\"options\":[\"ro\",\"nosuid\",\"nodev\",\"bind\"]}]}}";

static const char nvidia_yaml[] =
  "---\n"
  "cdiVersion: 0.5.0\n"
  "kind: nvidia.com/gpu\n"
  "devices:\n"
  "- name: \"0\"\n"
  "  containerEdits:\n"
  "    deviceNodes:\n"
  "    - path: /dev/nvidia0\n"
  "containerEdits:\n"
  "  env:\n"
  "  - NVIDIA_VISIBLE_DEVICES=void\n"
  "  deviceNodes:\n"
  "  - path: /dev/nvidiactl\n"
  "  hooks:\n"
  "  - hookName: createContainer\n"
  "    path: /usr/bin/nvidia-cdi-hook\n"
  "    args: [nvidia-cdi-hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]\n"
  "    env: [NVIDIA_CTK_DEBUG=false]\n"
  "  mounts:\n"
  "  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n"
  "    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n"
  "    options:\n"
  "    - ro\n"
  "    - nosuid\n"
  "    - nodev\n"
  "    - bind\n";

static void
check_nvidia (const char *text, bool yaml)
{
  struct cdi_spec s;
  char *error = NULL;
  int rc = cdi_spec_parse (text, strlen (text), yaml, &s, &error);
  if (rc < 0)
    fail_msg ("%s", error);
  assert_string_equal (s.version, "0.5.0");
  assert_string_equal (s.vendor, "nvidia.com");
  assert_string_equal (s.class, "gpu");
  assert_int_equal (s.n_devices, 1);
  assert_string_equal (s.devices[0].name, "0");
  assert_string_equal (s.devices[0].edits.where, "devices[0].containerEdits");
  assert_int_equal (s.devices[0].edits.n_nodes, 1);
  assert_string_equal (s.devices[0].edits.nodes[0].path, "/dev/nvidia0");
  assert_null (s.devices[0].edits.nodes[0].host_path);
  assert_string_equal (s.edits.env[0], "NVIDIA_VISIBLE_DEVICES=void");
  assert_null (s.edits.env[1]);
  assert_int_equal (s.edits.n_hooks, 1);
  assert_string_equal (s.edits.hooks[0].name, "createContainer");
  assert_string_equal (s.edits.hooks[0].args[1], "update-ldcache");
  assert_null (s.edits.hooks[0].args[4]);
  assert_string_equal (s.edits.hooks[0].env[0], "NVIDIA_CTK_DEBUG=false");
  assert_int_equal (s.edits.n_mounts, 1);
  assert_string_equal (s.edits.mounts[0].options[3], "bind");
  assert_null (s.edits.unsupported);
  cdi_spec_clear (&s);
}

static void
test_nvidia_json (void **state)
{
  (void) state;
  check_nvidia (nvidia_json, false);
}

static void
test_nvidia_yaml (void **state)
{
  (void) state;
  check_nvidia (nvidia_yaml, true);
}

/* TEXT is refused, its message holding WANT. */
static void
refused (const char *text, bool yaml, const char *want)
{
  struct cdi_spec s;
  char *error = NULL;
  if (cdi_spec_parse (text, strlen (text), yaml, &s, &error) == 0)
    fail_msg ("accepted, expected '%s': %s", want, text);
  if (strstr (error, want) == NULL)
    fail_msg ("'%s' does not say '%s'", error, want);
  assert_null (strchr (error, '\n'));
  cdi_spec_clear (&s);
  free (error);
}

#define DEV(edits) "devices: [{name: d, containerEdits: " edits "}]\n"

static void
test_fields_named (void **state)
{
  (void) state;
  refused ("kind: a.com/b\n" DEV ("{env: [A=1]}"), true, "cdiVersion: missing");
  refused ("cdiVersion: 0.2.0\nkind: a.com/b\n" DEV ("{env: [A=1]}"), true,
           "cdiVersion: '0.2.0' is not a version enter-devroot reads (0.3.0 to 1.1.0)");
  refused ("cdiVersion: 0.3.0\nkind: foo\n" DEV ("{env: [A=1]}"), true,
           "kind: 'foo' is not VENDOR/CLASS");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b/c\n" DEV ("{env: [A=1]}"), true, "kind: 'a.com/b/c': its class");
  refused ("cdiVersion: 0.3.0\nkind: 1a.com/b\n" DEV ("{env: [A=1]}"), true, "kind: '1a.com/b': its vendor");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: -x, containerEdits: {env: [A=1]}}]\n",
           true, "devices[0].name: '-x' is not a device name");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: '0', containerEdits: {env: [A=1]}}]\n",
           true, "cdiVersion: '0.3.0' is older than the 0.5.0 that devices[0].name needs");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{deviceNodes: [{path: dev/x}]}"), true,
           "devices[0].containerEdits.deviceNodes[0].path: 'dev/x' is not an absolute path");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{mounts: [{hostPath: /a, containerPath: /b/../c}]}"),
           true, "devices[0].containerEdits.mounts[0].containerPath: '/b/../c' has a '..' component");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{mounts: [{hostPath: /a, containerPath: /c, type: tmpfs}]}"),
           true, "cdiVersion: '0.3.0' is older than the 0.4.0 that devices[0].containerEdits.mounts[0].type needs");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{env: [A=1], foo: 1}"), true,
           "devices[0].containerEdits.foo: an unknown field");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{env: [A=1], Env: [B=2]}"), true,
           "devices[0].containerEdits.Env: given twice");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{env: ['=1']}"), true,
           "devices[0].containerEdits.env[0]: not NAME=VALUE");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{env: [1]}"), true,
           "devices[0].containerEdits.env[0]: not a string");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{hooks: [{hookName: later, path: /h}]}"),
           true, "devices[0].containerEdits.hooks[0].hookName: 'later' is not prestart");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{hooks: [{hookName: createContainer, path: /h, timeout: 0}]}"),
           true, "devices[0].containerEdits.hooks[0].timeout: 0: a timeout is a number of seconds");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{deviceNodes: [{path: /dev/x, type: z}]}"),
           true, "devices[0].containerEdits.deviceNodes[0].type: 'z' is not b, c, u or p");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{deviceNodes: [{path: /dev/x, permissions: rwx}]}"),
           true, "devices[0].containerEdits.deviceNodes[0].permissions: 'rwx' is not made of r, w and m");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{deviceNodes: [{path: /dev/x, major: x}]}"),
           true, "devices[0].containerEdits.deviceNodes[0].major: not an integer");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\n" DEV ("{}"), true,
           "devices[0].containerEdits: missing or empty");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\ndevices: []\n", true, "devices: missing or empty");
  refused ("cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: d, containerEdits: {env: [A=1]}},"
           " {name: d, containerEdits: {env: [B=1]}}]\n", true,
           "devices[1].name: 'd' is the name of devices[0] too");
  refused ("cdiVersion: 0.6.0\nkind: a.com/b\n" DEV ("{additionalGids: [-1]}"), true,
           "devices[0].containerEdits.additionalGids[0]: not a group id");
  refused ("cdiVersion: 0.6.0\nkind: a.com/b\n" DEV ("{additionalGIDs: [5]}"), true,
           "cdiVersion: '0.6.0' is older than the 0.7.0 that devices[0].containerEdits.additionalGids needs");
  refused ("[1, 2]", false, "(the document): not an object");
  refused ("{\"cdiVersion\": \"0.3.0\", \"cdiVersion\": \"0.4.0\"}", false, "line 1:");
  refused ("{\"cdiVersion\": ", false, "line 1:");
}

static void
test_yaml_refusals (void **state)
{
  (void) state;
  refused ("a: &x [1]\nb: *x\n", true, "line 1: anchors and aliases are not accepted");
  refused ("cdiVersion: !!binary AAAA\n", true, "the tag tag:yaml.org,2002:binary is not accepted");
  refused ("a: 1\n---\nb: 2\n", true, "line 2: more than one document");
  refused ("? [a]\n: 1\n", true, "a key that is not a scalar");
  refused ("a: 1\na: 2\n", true, "line 2: the key 'a' is given twice");
  refused ("a: \"\\0\"\n", true, "a NUL byte in a value");
  refused ("", true, "no document");
  refused ("a: [\n", true, "line 2:");
  /* 10000 levels of sequences: refused at the limit, the C stack never as deep. */
  size_t depth = 10000;
  char *deep = xmalloc (2 * depth + 1);
  memset (deep, '[', depth);
  memset (deep + depth, ']', depth);
  deep[2 * depth] = '\0';
  refused (deep, true, "line 1: nested more than 64 deep");
  refused (deep, false, "line 1:");
  free (deep);
}

/* additionalGids (not 0), intelRdt and netDevices are checked, and kept to be refused when
 * the device is asked for (resolve.c), naming the field. */
static void
test_unsupported_recorded (void **state)
{
  (void) state;
  const char *text = "cdiVersion: 1.1.0\nkind: a.com/b\n" DEV ("{additionalGids: [0, 44], netDevices: [{hostInterfaceName: eth0, name: e}]}");
  struct cdi_spec s;
  char *error = NULL;
  if (cdi_spec_parse (text, strlen (text), true, &s, &error) < 0)
    fail_msg ("%s", error);
  assert_string_equal (s.devices[0].edits.unsupported, "devices[0].containerEdits.additionalGids");
  cdi_spec_clear (&s);
  text = "cdiVersion: 0.7.0\nkind: a.com/b\n" DEV ("{additionalGids: [0]}");
  if (cdi_spec_parse (text, strlen (text), true, &s, &error) < 0)
    fail_msg ("%s", error);
  assert_null (s.devices[0].edits.unsupported); /* a gid of 0 is ignored, as by the CDI */
  cdi_spec_clear (&s);
}

static void
test_device_names (void **state)
{
  (void) state;
  const char *why;
  const char *good[] = { "nvidia.com/gpu=0", "nvidia.com/gpu=all", "vendor.com/foo=GPU-a1:b2",
                         "a/b=c", "foo.bar.baz/foo-bar123.B_az=1" };
  const char *bad[] = { "nvidia.com/gpu", "gpu=0", "nvidia.com=0/gpu", "/gpu=0", "nvidia.com/=0",
                        "nvidia.com/gpu=", "nvidia.com/gpu=-0", "1nvidia.com/gpu=0",
                        "nvidia.com/gpu=0/1", "nvidia.com/g pu=0" };
  for (size_t i = 0; i < N_ELEMENTS (good); i++)
    if (cdi_device_name_check (good[i], &why) < 0)
      fail_msg ("%s refused: %s", good[i], why);
  for (size_t i = 0; i < N_ELEMENTS (bad); i++)
    if (cdi_device_name_check (bad[i], &why) == 0)
      fail_msg ("%s accepted", bad[i]);
}

static void
test_edits_round_trip (void **state)
{
  (void) state;
  char a[] = "A=1", b[] = "B=", hook_word[] = "hook", empty[] = "", xy[] = "x y";
  char dev_zero[] = "/dev/zero", gpu0[] = "/dev/gpu0", l[] = "/l", usr_l[] = "/usr/l";
  char options[] = "ro,nosuid,nodev,exec,rbind", stage[] = "createContainer";
  char spec[] = "/etc/cdi/a.yaml", h[] = "/h";
  char *env[] = { a, b, NULL };
  char *args[] = { hook_word, empty, xy, NULL };
  char *none[] = { NULL };
  struct cdi_node node = { dev_zero, gpu0 };
  struct cdi_mount mount = { l, usr_l, options };
  struct cdi_hook hook = { stage, spec, h, args, none, 7 };
  struct cdi_edits e = { .env = env, .nodes = &node, .n_nodes = 1, .mounts = &mount,
                         .n_mounts = 1, .hooks = &hook, .n_hooks = 1 };
  size_t len;
  char *blob = cdi_edits_encode (&e, &len);
  struct cdi_edits d;
  const char *why;
  assert_int_equal (cdi_edits_decode (blob, len, &d, &why), 0);
  assert_string_equal (d.env[1], "B=");
  assert_null (d.env[2]);
  assert_string_equal (d.nodes[0].path, "/dev/gpu0");
  assert_true (cdi_mount_has (d.mounts[0].options, "rbind"));
  assert_false (cdi_mount_has (d.mounts[0].options, "bind"));
  assert_string_equal (d.hooks[0].args[2], "x y");
  assert_string_equal (d.hooks[0].args[1], "");
  assert_null (d.hooks[0].env[0]);
  assert_int_equal (d.hooks[0].timeout, 7);
  cdi_edits_clear (&d);
  /* Cut anywhere (in a buffer of exactly that size: ASan sees a read past it), it is refused
   * but at the end of a record: after the magic, each variable, the node and the mount. */
  size_t accepted = 0;
  for (size_t cut = 0; cut < len; cut++)
    {
      char *part = xmalloc (cut ? cut : 1);
      memcpy (part, blob, cut);
      if (cdi_edits_decode (part, cut, &d, &why) == 0)
        {
          assert_int_equal (part[cut - 1], '\0');
          accepted++;
        }
      cdi_edits_clear (&d);
      free (part);
    }
  assert_int_equal (accepted, 5);
  free (blob);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_nvidia_json),
    cmocka_unit_test (test_nvidia_yaml),
    cmocka_unit_test (test_fields_named),
    cmocka_unit_test (test_yaml_refusals),
    cmocka_unit_test (test_unsupported_recorded),
    cmocka_unit_test (test_device_names),
    cmocka_unit_test (test_edits_round_trip),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
