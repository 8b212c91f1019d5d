"""AnvilExecutor: smolagents' PythonExecutor contract, each code action a run in Anvil.

Runs in the agent's process, as its user; the code actions run in Anvil's jails, one run
each, through the broker (anvil_client.Anvil). A smolagents user writes

    from smolagents import CodeAgent, InferenceClientModel
    from anvil_client.smolagents import AnvilExecutor
    agent = CodeAgent(tools=[], model=InferenceClientModel(), executor=AnvilExecutor())

What CodeAgent does with an executor (smolagents' agents.py) and what this class does:

- `send_variables(state)` at the start of a run: the agent's state (its additional_args)
  becomes the variables of the first action; they must be JSON values under names a tool may
  use (docs/agent.md), else ValueError here, before anything runs.
- `send_tools(tools)`: CodeAgent always sends its `final_answer` tool, which is Anvil's own
  builtin in every jail (`final_answer(value)`, any JSON value). Any other tool (or managed
  agent) would have to run inside the jail, without its host's network or files: refused
  with ValueError, so the agent fails at its start and not at its first tool call.
- `__call__(code_action)` -> CodeOutput(output, logs, is_final_answer): one run, with the
  variables the previous action left (`RunResult.variables`, carried exactly as Anvil's own
  agent carries them: JSON, names and bounds checked on both sides). logs are the run's
  stdout; a final_answer() call ends the action with is_final_answer and output its value.
  A run that did not end ok raises AnvilExecutionError, whose message holds the logs, the
  exception's traceback and every refusal with its layer and Anvil's message: CodeAgent
  makes it the step's error (AgentExecutionError) and shows it to the model; the logs are
  also left in `state["_print_outputs"]`, where CodeAgent looks for them. A blocked or killed
  action keeps the state from before it (the jail reports no variables for it).
- `output`, for an action that does not call final_answer, is the repr() of its last line's
  value when that line is an expression (`df.describe()`), as a notebook shows it: the
  action is sent with that one statement written `anvil_last_output = repr((...))`, on its
  own lines, and the variable is taken out of what the next action is given. None when the
  last statement is no expression or its repr does not fit in the variables' 1 MiB.

Anvil's own failures (unreachable broker, a refused request, a sandbox failure) are raised
as anvil_client's exceptions, not as an action's error.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Union

from . import _messages as M
from .client import Anvil
from .results import Limits, RunResult

try:  # smolagents' own types when it is installed, so that isinstance() holds for CodeAgent
    from smolagents.local_python_executor import CodeOutput, PythonExecutor  # type: ignore
except ImportError:  # smolagents is not installed: the same shapes
    @dataclass
    class CodeOutput:  # type: ignore[no-redef]
        """smolagents' CodeOutput: the action's output, its logs, whether it was final."""

        output: Any
        logs: str
        is_final_answer: bool

    class PythonExecutor:  # type: ignore[no-redef]
        """smolagents' abstract executor: send_tools, send_variables, __call__."""


class AnvilExecutionError(Exception):
    """A code action that did not end ok (error, blocked, killed): its message is what the
    model is shown; .result is the run's RunResult."""

    def __init__(self, message: str, result: RunResult):
        super().__init__(message)
        self.result = result


LAST_OUTPUT = "anvil_last_output"


def _capture_last(code: str) -> tuple[str, bool]:
    """The action with its last statement, if an expression, made `anvil_last_output =
    repr((EXPR))`: only that statement's first and last lines change, so every line keeps its
    number. The code is the model's: one that does not parse is sent as it is (the run says
    why it does not)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code, False
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return code, False
    node = tree.body[-1]
    if node.end_lineno is None or node.end_col_offset is None:
        return code, False
    if "\r" in code:  # a line the tokenizer ends at \r: numbered apart from split("\n")'s
        return code, False
    lines = code.split("\n")  # only "\n" ends a line for the tokenizer (not \f, \x1c, \u2028)
    first, last = node.lineno - 1, node.end_lineno - 1
    head = lines[first].encode("utf-8")  # ast's columns are UTF-8 byte offsets
    tail = lines[last].encode("utf-8")
    if first == last:
        expr = head[node.col_offset:node.end_col_offset]
        new = head[:node.col_offset] + f"{LAST_OUTPUT} = repr((".encode() + expr + b"))" + head[node.end_col_offset:]
        lines[first] = new.decode("utf-8")
    else:
        lines[first] = (head[:node.col_offset] + f"{LAST_OUTPUT} = repr((".encode()
                        + head[node.col_offset:]).decode("utf-8")
        lines[last] = (tail[:node.end_col_offset] + b"))" + tail[node.end_col_offset:]).decode("utf-8")
    out = "\n".join(lines)
    try:
        ast.parse(out)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code, False
    return out, True


def _describe(r: RunResult) -> str:
    """What went wrong, for the model: the status, each refusal with its layer, the traceback."""
    lines = [M.EXEC_FAILED.format(status=r.killed or r.status)]
    for e in r.refusals:
        where = M.EXEC_LINE.format(line=e.line) if e.line else ""
        lines.append(M.EXEC_REFUSAL.format(layer=e.layer, message=e.message, where=where))
    tb = next((e.traceback for e in r.events if e.kind == "exception" and e.traceback), None)
    if tb:
        lines.append(tb.rstrip("\n"))
    elif r.stderr and r.status == "error":
        lines.append(r.stderr.rstrip("\n"))
    return "\n".join(lines)


class AnvilExecutor(PythonExecutor):
    """Runs each of a CodeAgent's code actions in Anvil (see the module's docstring).

    socket/anvil: the broker (default $ANVIL_SOCKET, else /run/anvil.sock), or an Anvil.
    inputs: files every action sees in ./inputs (paths, or {name: path | bytes}), passed
    as fds each run. limits, caps: each run's (Anvil's defaults otherwise). .results holds
    every action's RunResult, in order; .state the variables carried, decoded."""

    def __init__(self, socket: Optional[str] = None, anvil: Optional[Anvil] = None,
                 inputs: Union[None, Mapping[str, Any], Iterable[Any]] = None,
                 limits: Union[None, Limits, Mapping[str, int]] = None, caps: Iterable[str] = ()):
        self.anvil = anvil or Anvil(socket)
        self.inputs = inputs
        self.limits = limits
        self.caps = list(caps)
        self._variables: dict[str, Any] = {}
        self._text: Optional[str] = None  # the last run's variables, as Anvil sent them
        self.results: list[RunResult] = []
        self.state: dict[str, Any] = {"_print_outputs": ""}

    def send_tools(self, tools: Mapping[str, Any]) -> None:
        """Accepts final_answer (Anvil's builtin); any other tool is ValueError."""
        others = sorted(n for n in tools if n != "final_answer")
        if others:
            raise ValueError(M.EXEC_TOOL.format(names=", ".join(others)))

    def send_variables(self, variables: Mapping[str, Any]) -> None:
        """Adds variables for the next action (smolagents passes the agent's whole state).
        Names starting with '_' are smolagents' own and are not sent."""
        merged = dict(self._current())
        for k, v in variables.items():
            if k.startswith("_"):
                continue
            try:
                json.dumps(v, allow_nan=False)
            except (TypeError, ValueError) as e:
                raise ValueError(M.EXEC_VARIABLE.format(name=k, why=e)) from None
            merged[k] = v
        self._variables = merged
        self._text = None
        self._sync_state()

    def _current(self) -> dict[str, Any]:
        return json.loads(self._text) if self._text is not None else self._variables

    def _sync_state(self) -> None:
        logs = self.state.get("_print_outputs", "")
        self.state = {**self._current(), "_print_outputs": logs}

    def __call__(self, code_action: str) -> CodeOutput:
        """One action, one run; raises AnvilExecutionError if it did not end ok."""
        variables: Union[str, Mapping[str, Any], None] = self._text if self._text is not None else self._variables
        code, captured = _capture_last(code_action)
        r = self.anvil.run(code, inputs=self.inputs, caps=self.caps, limits=self.limits,
                           variables=variables or None, tool_name=f"step {len(self.results) + 1}")
        self.results.append(r)
        last = None
        if r.variables is not None:
            carried = json.loads(r.variables)
            last = carried.pop(LAST_OUTPUT, None) if captured else None
            self._text = json.dumps(carried, ensure_ascii=False, separators=(",", ":"))
        self.state["_print_outputs"] = r.stdout
        self._sync_state()
        if r.status != "ok":
            raise AnvilExecutionError(f"{r.stdout}{_describe(r)}" if r.stdout else _describe(r), r)
        if r.has_final_answer:
            return CodeOutput(output=r.final_answer_value, logs=r.stdout, is_final_answer=True)
        return CodeOutput(output=None if last in (None, "None") else last, logs=r.stdout, is_final_answer=False)

    def cleanup(self) -> None:
        """Nothing is held between actions (each run is a jail of its own)."""
