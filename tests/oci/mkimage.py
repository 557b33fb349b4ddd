#!/usr/bin/env python3
"""Write an OCI image layout from a JSON spec, with no network and no container tool: the
images the OCI suite imports, pushes and attacks with.

    mkimage.py DIR SPEC.json

SPEC:
  {"tag": "t1",                       # org.opencontainers.image.ref.name of the entry (null:
                                      # none; default "latest")
   "layers": [LAYER, ...],
   "config": {"Env": [...], "WorkingDir": "/w", "Cmd": [...], "Entrypoint": [...]},
   "platforms": ["linux/amd64", "linux/arm64"],   # optional: a nested multi-arch index,
                                                  # each platform the same layers, a file
                                                  # /platform saying which
   "hostile": {...}}                  # optional, see HOSTILE below
LAYER:
  {"compression": "none"|"gzip"|"zstd",
   "tarball": "FILE"}                 # a ready-made (compressed) tar, used as it is, or
  {"compression": ..., "entries": [
     {"path": "a/b", "type": "file", "data": "text", "mode": 420},
     {"path": "d", "type": "dir"},
     {"path": "l", "type": "symlink", "target": "/etc"},
     {"path": "h", "type": "hardlink", "target": "a/b"},
     {"path": "p", "type": "fifo"}, {"path": "null", "type": "chardev"},   # 1,3
     {"path": "f", "data": "x", "xattrs": {"user.k": "HEX"}}]}   # SCHILY.xattr.*
HOSTILE (each breaks one thing the importer must refuse):
  "flip_layer_byte": N                # byte N of layer 0's blob changed (same name, size)
  "manifest_padding": N               # N bytes of annotation in the manifest
  "config_not_json": true             # the config blob is not JSON
  "truncate_layer": N                 # layer 0's blob cut to N bytes (descriptor follows)
  "config_size": N                    # the config descriptor claims N bytes
  "repeat_layers": N                  # the manifest lists layer 0 N times
  "wrong_diff_id": N                  # the config's diff_id of layer N is another tar's
"""
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile

MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_INDEX = "application/vnd.oci.image.index.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_LAYER = {"none": "application/vnd.oci.image.layer.v1.tar",
            "gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
            "zstd": "application/vnd.oci.image.layer.v1.tar+zstd"}


def put_blob(out, data):
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(out, "blobs", "sha256", digest), "wb") as f:
        f.write(data)
    return "sha256:" + digest


def tar_bytes(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for e in entries:
            info = tarfile.TarInfo(e["path"])
            info.mtime = 1700000000
            if "xattrs" in e:
                # Bytes that are not UTF-8 are written as they are (hdrcharset=BINARY).
                info.pax_headers = {"SCHILY.xattr." + k: bytes.fromhex(v).decode(
                    "utf-8", "surrogateescape") for k, v in e["xattrs"].items()}
            kind = e.get("type", "file")
            if kind == "file":
                data = e.get("data", "").encode()
                info.size = len(data)
                info.mode = e.get("mode", 0o644)
                t.addfile(info, io.BytesIO(data))
                continue
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, e.get("mode", 0o755)
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, e["target"]
            elif kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, e["target"]
            elif kind == "fifo":
                info.type, info.mode = tarfile.FIFOTYPE, e.get("mode", 0o644)
            elif kind == "chardev":
                info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
            t.addfile(info)
    return buf.getvalue()


def compress(data, how):
    if how == "gzip":
        return gzip.compress(data, mtime=0)
    if how == "zstd":
        return subprocess.run(["zstd", "-q", "-c"], input=data, check=True,
                              stdout=subprocess.PIPE).stdout
    return data


def layer_blob(layer):
    """The blob and its diff_id (the digest of the uncompressed tar)."""
    if "tarball" in layer:
        with open(layer["tarball"], "rb") as f:
            blob = f.read()
        plain = gzip.decompress(blob) if layer.get("compression") == "gzip" else blob
        return blob, "sha256:" + hashlib.sha256(plain).hexdigest()
    plain = tar_bytes(layer["entries"])
    return (compress(plain, layer.get("compression", "none")),
            "sha256:" + hashlib.sha256(plain).hexdigest())


def image_manifest(out, spec, extra_file=None):
    hostile = spec.get("hostile", {})
    layers = []
    diff_ids = []
    for i, layer in enumerate(spec["layers"]):
        blob, diff_id = layer_blob(layer)
        if i == 0 and "truncate_layer" in hostile:
            blob = blob[:hostile["truncate_layer"]]
        layers.append({"mediaType": MT_LAYER[layer.get("compression", "none")],
                       "digest": put_blob(out, blob), "size": len(blob)})
        diff_ids.append(diff_id)
    if extra_file is not None:
        blob = tar_bytes([{"path": "platform", "data": extra_file}])
        layers.append({"mediaType": MT_LAYER["none"], "digest": put_blob(out, blob),
                       "size": len(blob)})
        diff_ids.append("sha256:" + hashlib.sha256(blob).hexdigest())
    if "wrong_diff_id" in hostile:
        diff_ids[hostile["wrong_diff_id"]] = "sha256:" + hashlib.sha256(b"another tar").hexdigest()
    config = {"architecture": "amd64", "os": "linux", "config": spec.get("config", {}),
              "rootfs": {"type": "layers", "diff_ids": diff_ids},
              # What builders write, and charliecloud's ch-image requires.
              "history": [{"created": "2023-11-14T22:13:20Z", "created_by": f"mkimage layer {i}"}
                          for i in range(len(diff_ids))]}
    config_bytes = json.dumps(config).encode()
    if hostile.get("config_not_json"):
        config_bytes = b"this is not JSON {"
    config_desc = {"mediaType": MT_CONFIG, "digest": put_blob(out, config_bytes),
                   "size": hostile.get("config_size", len(config_bytes))}
    if "repeat_layers" in hostile:
        layers = [layers[0]] * hostile["repeat_layers"]
        diff_ids = [diff_ids[0]] * hostile["repeat_layers"]
    if "flip_layer_byte" in hostile:
        path = os.path.join(out, "blobs", "sha256", layers[0]["digest"][len("sha256:"):])
        with open(path, "r+b") as f:
            f.seek(hostile["flip_layer_byte"])
            byte = f.read(1)
            f.seek(hostile["flip_layer_byte"])
            f.write(bytes([byte[0] ^ 0x20]))
    manifest = {"schemaVersion": 2, "mediaType": MT_MANIFEST, "config": config_desc,
                "layers": layers}
    if "manifest_padding" in hostile:
        manifest["annotations"] = {"padding": "x" * hostile["manifest_padding"]}
    data = json.dumps(manifest).encode()
    return {"mediaType": MT_MANIFEST, "digest": put_blob(out, data), "size": len(data)}


def main():
    out, spec_path = sys.argv[1], sys.argv[2]
    with open(spec_path) as f:
        spec = json.load(f)
    os.makedirs(os.path.join(out, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(out, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    if "platforms" in spec:
        entries = []
        for p in spec["platforms"]:
            os_, arch = p.split("/")[:2]
            desc = image_manifest(out, spec, extra_file=p)
            desc["platform"] = {"os": os_, "architecture": arch}
            entries.append(desc)
        data = json.dumps({"schemaVersion": 2, "mediaType": MT_INDEX,
                           "manifests": entries}).encode()
        top = {"mediaType": MT_INDEX, "digest": put_blob(out, data), "size": len(data)}
    else:
        top = image_manifest(out, spec)
    if spec.get("tag", "latest") is not None:  # "tag": null for an untagged entry
        top["annotations"] = {"org.opencontainers.image.ref.name": spec.get("tag", "latest")}
    index_path = os.path.join(out, "index.json")
    index = {"schemaVersion": 2, "manifests": []}
    if os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f)
    index["manifests"].append(top)
    with open(index_path, "w") as f:
        json.dump(index, f)
    print(top["digest"])


if __name__ == "__main__":
    main()
