"""Structure of the Kubernetes deployment (deploy/k8s/), checked without a cluster or network:
every file parses as YAML documents of known kinds; the shards Job is an Indexed Job whose pods run
`kerntune fleet run` with the shard taken from the completion index and the shard count equal to
its completions; both Jobs mount the manifest ConfigMap and the shared claim the storage file
defines, at the paths their commands use; every volumeMount names a volume of its pod; the merge
Job merges, with --require-complete status first, the same shard count into a bundle and verifies
it. Exit 77 (skipped) without python3-yaml.
    check_k8s_manifests.py DEPLOY_K8S_DIR"""
import pathlib
import re
import sys

try:
    import yaml
except ImportError:
    print("skipped: python3-yaml is missing (apt-get install python3-yaml)")
    sys.exit(77)


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def load(directory):
    documents = {}
    for path in sorted(pathlib.Path(directory).glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is None:
                continue
            for field in ("apiVersion", "kind", "metadata"):
                if field not in doc:
                    fail(f"{path.name}: a {doc.get('kind', 'document')} without {field}")
            documents[(doc["kind"], doc["metadata"]["name"])] = (path.name, doc)
    return documents


def pod_of(job):
    spec = job["spec"]["template"]["spec"]
    if spec.get("restartPolicy") not in ("Never", "OnFailure"):
        fail(f"job {job['metadata']['name']}: restartPolicy must be Never or OnFailure")
    return spec


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def check_mounts(name, pod, documents):
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {}
    for container in pod["containers"]:
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                fail(f"{name}: volumeMount {mount['name']} names no volume of the pod")
            mounts[mount["mountPath"]] = volumes[mount["name"]]
    for volume in volumes.values():
        if "persistentVolumeClaim" in volume:
            claim = volume["persistentVolumeClaim"]["claimName"]
            if ("PersistentVolumeClaim", claim) not in documents:
                fail(f"{name}: claim {claim} is defined by no file")
        if "configMap" in volume:
            config = volume["configMap"]["name"]
            if ("ConfigMap", config) not in documents:
                fail(f"{name}: ConfigMap {config} is defined by no file")
    return mounts


def command_of(container):
    return " ".join(container.get("command", []) + container.get("args", []))


def main():
    documents = load(sys.argv[1])
    jobs = [doc for (kind, _), (_, doc) in documents.items() if kind == "Job"]
    shards = [j for j in jobs if j["spec"].get("completionMode") == "Indexed"]
    merges = [j for j in jobs if j["spec"].get("completionMode") != "Indexed"]
    if len(shards) != 1 or len(merges) != 1:
        fail(f"expected one Indexed shards Job and one merge Job, found {len(shards)} and "
             f"{len(merges)}")
    shard_job, merge_job = shards[0], merges[0]

    completions = shard_job["spec"]["completions"]
    if shard_job["spec"].get("parallelism", completions) > completions:
        fail("the shards Job runs more pods at once than it has shards")
    pod = pod_of(shard_job)
    mounts = check_mounts("shards Job", pod, documents)
    container = pod["containers"][0]
    env = env_of(container)
    command = command_of(container)
    if env.get("KT_SHARDS") != str(completions):
        fail(f"KT_SHARDS={env.get('KT_SHARDS')} is not the Job's completions ({completions})")
    if not re.search(r"fleet run .*--shard \"?\$\(\(JOB_COMPLETION_INDEX \+ 1\)\)/\$KT_SHARDS",
                     command):
        fail(f"the shard pods do not run `fleet run --shard $((JOB_COMPLETION_INDEX + 1))/"
             f"$KT_SHARDS`: {command}")
    gpus = container.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
    if gpus is None or env.get("GPUS") != str(gpus):
        fail(f"GPUS={env.get('GPUS')} must equal the nvidia.com/gpu limit ({gpus})")
    if "--devices" not in command:
        fail("the shard pods do not give their GPUs to --devices")

    merge_pod = pod_of(merge_job)
    merge_mounts = check_mounts("merge Job", merge_pod, documents)
    merge_container = merge_pod["containers"][0]
    merge_command = command_of(merge_container)
    if env_of(merge_container).get("KT_SHARDS") != str(completions):
        fail("the merge Job's KT_SHARDS is not the shards Job's completions")
    for step in ("fleet status", "--require-complete", "fleet merge", "fleet verify"):
        if step not in merge_command:
            fail(f"the merge Job does not run `{step}`: {merge_command}")

    for name, command_text, mounted in (("shards", command, mounts),
                                        ("merge", merge_command, merge_mounts)):
        manifest = re.search(r"--manifest (\S+)", command_text).group(1)
        if not any(manifest.startswith(path + "/") for path, volume in mounted.items()
                   if "configMap" in volume):
            fail(f"the {name} Job's manifest {manifest} is not on the manifest ConfigMap's mount")
        out = re.search(r"--(?:out|dir) (\S+)", command_text).group(1)
        if not any(out.startswith(path) for path, volume in mounted.items()
                   if "persistentVolumeClaim" in volume):
            fail(f"the {name} Job's {out} is not on the shared claim")
    config = documents[("ConfigMap", "kerntune-manifest")][1]
    text = next(iter(config["data"].values()))
    if not text.startswith("kerntune-manifest 1\n"):
        fail("the manifest ConfigMap does not hold a manifest (its first line)")
    print(f"k8s manifests: {len(documents)} documents; {completions} shards, merge and verify")


if __name__ == "__main__":
    main()
