"""Types of etrt's devtools glue (python/src/devtools_module.cpp); use etrt.devtools."""
from typing import Any, Dict, List, Union

# The runtime functions both glue modules define (python/src/glue.h), typed once in _etrt.pyi.
from ._etrt import (ENTRY_BACKEND as ENTRY_BACKEND, ENTRY_OPERATOR as ENTRY_OPERATOR, ENTRY_TRACER as ENTRY_TRACER,
                    add_manifest as add_manifest, load_all_plugins as load_all_plugins, load_plugin as load_plugin,
                    manifests as manifests, num_threads as num_threads, operator_is_builtin as operator_is_builtin,
                    plugins as plugins, registry as registry, registry_identity as registry_identity,
                    rejections as rejections, report_json as report_json, set_num_threads as set_num_threads,
                    threadpool_identity as threadpool_identity, version as version)

def provider_of(name: Union[str, bytes], kind: str = "operator") -> Dict[str, Any]: ...
def program_plan_file(path: str) -> Dict[str, List[Dict[str, Any]]]: ...
def program_plan_bytes(data: bytes) -> Dict[str, List[Dict[str, Any]]]: ...
