"""A stand-in for AppWorld's world class (`appworld.environment.AppWorld`), backed by the
workbench's bundled world.

Why it exists: the real class loads its task's data bundle (task specs, app databases, ground
truth) when it is made; that bundle comes from `appworld download data` and cannot be fetched
where the contract test runs (only package registries can). Everything in front of the world is
AppWorld's own code as installed from PyPI: the FastAPI app of `appworld.serve.environment`
(routes, request parsing, replies, errors) and the `TestTracker` that shapes `/evaluate`'s result.

It offers what that server uses of its world: `task` (id, instruction, supervisor, datetime),
`task_id`, `execute`, `task_completed`, `evaluate`, `close` and `close_all`. Code runs in, and
tasks are graded by, one server of the bundled world that the test started; its URL and access
token come in `HARNESS_S_BUNDLED_WORLD_URL` and `HARNESS_S_BUNDLED_WORLD_TOKEN`.
"""

import os
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import requests
from appworld.evaluator import TestTracker


class BundledWorldError(Exception):
    """The bundled world refused a call; the server turns it into a 500, as it does any failure
    of the real world."""


def _call(route: str, **body: Any) -> Any:
    url = os.environ["HARNESS_S_BUNDLED_WORLD_URL"].rstrip("/") + "/" + route
    token = os.environ["HARNESS_S_BUNDLED_WORLD_TOKEN"]
    # above the bundled world's own per-cell limit
    response = requests.post(url, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=300)
    if response.status_code != 200:
        raise BundledWorldError(f"the bundled world's /{route} answered {response.status_code}: {response.text}")
    return response.json()["output"]


class BundledWorld:
    def __init__(
        self,
        task_id: str,
        experiment_name: str = "default",
        timeout_seconds: int | None = 100,
        **_options: Any,
    ) -> None:
        # The server passes every option of AppWorldInitDefaults; those about AppWorld's own
        # machinery (remote URLs, ground-truth loading, safety patches, ...) have no meaning here.
        body: dict[str, Any] = {"task_id": task_id, "experiment_name": experiment_name}
        if timeout_seconds is not None:
            body["timeout_seconds"] = timeout_seconds
        info = _call("initialize", **body)
        self.task_id = task_id
        self.experiment_name = experiment_name
        # what the server reads of AppWorld's Task; its datetime is a datetime there too
        self.task = SimpleNamespace(
            id=info["task_id"],
            instruction=info["instruction"],
            supervisor=info["supervisor"],
            datetime=datetime.fromisoformat(info["datetime"]),
        )

    def execute(self, code: str) -> str:
        return _call("execute", task_id=self.task_id, code=code)

    def task_completed(self) -> bool:
        return _call("task_completed", task_id=self.task_id)

    def evaluate(self, suppress_errors: bool = True) -> TestTracker:
        result = _call("evaluate", task_id=self.task_id)
        # AppWorld's own tracker, filled with the bundled world's test results, so the server
        # shapes the reply (to_dict, report) exactly as it does for a real task
        tracker = TestTracker(difficulty=result.get("difficulty"), suppress_errors=suppress_errors)
        tracker.passes = [{"requirement": p["requirement"], "label": p.get("label")} for p in result["passes"]]
        tracker.failures = [
            {"requirement": f["requirement"], "trace": f.get("trace", ""), "label": f.get("label")} for f in result["failures"]
        ]
        if tracker.failures and not suppress_errors:
            # the real world's evaluation raises at its first failed test
            first = tracker.failures[0]
            raise AssertionError(first["trace"] or first["requirement"])
        return tracker

    def close(self) -> None:
        _call("close", task_id=self.task_id)

    @classmethod
    def close_all(cls, *_args: Any, **_kwargs: Any) -> None:
        _call("close_all")

    def save_logs(self) -> None:
        raise NotImplementedError("the bundled world keeps no logs")

    def save_state(self, state_id: str | None = None) -> str:
        raise NotImplementedError("the bundled world keeps no checkpoints")

    def load_state(self, state_id: str) -> None:
        raise NotImplementedError("the bundled world keeps no checkpoints")
