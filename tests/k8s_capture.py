"""Snakemake with the Kubernetes executor and no cluster, for
tests/test_kubernetes.py: the plugin's calls to the Kubernetes API are
replaced, the first Job it creates is written (as the API would receive
it, JSON) to $QLAB_K8S_CAPTURE, and the process ends there.

    QLAB_K8S_CAPTURE=job.json python tests/k8s_capture.py SNAKEMAKE-ARGS...
"""

from __future__ import annotations

import json
import os
import sys

import kubernetes.client
import kubernetes.config


def _create_job(self, namespace, body, **kwargs):
    doc = {"namespace": namespace, "job": kubernetes.client.ApiClient().sanitize_for_serialization(body)}
    with open(os.environ["QLAB_K8S_CAPTURE"], "w", encoding="utf-8") as out:
        json.dump(doc, out, indent=1, sort_keys=True)
    os._exit(0)


kubernetes.config.load_kube_config = lambda *args, **kwargs: None
kubernetes.client.CoreV1Api.create_namespaced_secret = lambda self, namespace, body, **kwargs: body
kubernetes.client.CoreV1Api.delete_namespaced_secret = lambda self, *args, **kwargs: None
kubernetes.client.BatchV1Api.create_namespaced_job = _create_job

if __name__ == "__main__":
    from snakemake.cli import main

    sys.argv = ["snakemake", *sys.argv[1:]]
    sys.exit(main())
