"""AnvilExecutor (anvil_client.smolagents) called the way smolagents' CodeAgent calls an
executor, against the suite's real broker: smolagents is not installable here, so
`codeagent_steps` below follows CodeAgent's code (smolagents' agents.py: `run` sends the
state then the tools, `_step_stream` calls the executor with each code action, makes
"Execution logs:\\n" + logs the observation, and on an exception takes the logs from
`executor.state["_print_outputs"]` and the error from str(e), then goes on to the next step).
"""

from __future__ import annotations

import os
import sys
import unittest
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from anvil_client import Anvil, Refused  # noqa: E402
from anvil_client.smolagents import AnvilExecutionError, AnvilExecutor, CodeOutput  # noqa: E402

SOCKET = os.environ["ANVIL_SOCKET"]


class FinalAnswerTool:
    """Stands for smolagents' FinalAnswerTool, which CodeAgent always sends."""

    name = "final_answer"

    def forward(self, answer):
        return answer


@dataclass
class Step:
    code: str
    observation: str = ""
    error: str | None = None
    output: object = None
    is_final_answer: bool = False


@dataclass
class Agent:
    steps: list[Step] = field(default_factory=list)
    final: object = None


def codeagent_steps(executor, tools: dict, state: dict, actions: list[str]) -> Agent:
    """CodeAgent.run's use of the executor, step by step (see the module's docstring)."""
    agent = Agent()
    executor.send_variables(variables=state)
    executor.send_tools({**tools})
    for code_action in actions:
        step = Step(code_action)
        agent.steps.append(step)
        try:
            code_output = executor(code_action)
            observation = "Execution logs:\n" + code_output.logs
        except Exception as e:  # CodeAgent: AgentExecutionError(str(e)), recorded in the step
            if hasattr(executor, "state") and "_print_outputs" in executor.state:
                execution_logs = str(executor.state["_print_outputs"])
                if len(execution_logs) > 0:
                    step.observation = "Execution logs:\n" + execution_logs
            step.error = str(e)
            continue
        step.observation = observation + "Last output from code snippet:\n" + str(code_output.output)
        step.output, step.is_final_answer = code_output.output, code_output.is_final_answer
        if code_output.is_final_answer:
            agent.final = code_output.output
            break
    return agent


class ExecutorTests(unittest.TestCase):
    def test_steps_like_codeagent(self):
        ex = AnvilExecutor(socket=SOCKET, inputs={"sales.csv": b"region,amount\nn,10\ns,32\n"})
        agent = codeagent_steps(ex, {"final_answer": FinalAnswerTool()}, {"unit": "EUR", "_private": object()}, [
            # 1: reads an input, uses a variable sent, leaves variables
            "import csv\nrows = list(csv.DictReader(open('inputs/sales.csv')))\n"
            "total = sum(int(r['amount']) for r in rows)\nprint('total', total, unit)\n",
            # 2: an error; the logs before it and the traceback are the step's
            "print('before the error')\nhalf = total / 0\n",
            # 3: blocked by a layer: the refusal with its layer, verbatim
            "import subprocess\n",
            # 4: the state from step 1 is still there (2 raised after binding nothing new, 3 never ran)
            "doubled = total * 2\nprint(doubled)\n",
            # 5: its last line an expression: its repr() is the step's output
            "rows[0]\n",
            # 6: which is no variable of the next step
            "print('anvil_last_output' in globals(), len(rows))\n",
            # 7: the final answer
            "final_answer({'total': total, 'doubled': doubled, 'unit': unit})\n",
            "print('never run')\n",
        ])
        s = agent.steps
        self.assertEqual(len(s), 7)
        self.assertEqual((s[0].error, s[0].observation),
                         (None, "Execution logs:\ntotal 42 EUR\nLast output from code snippet:\nNone"))
        self.assertFalse(s[0].is_final_answer)
        self.assertEqual(s[1].observation, "Execution logs:\nbefore the error\n")
        self.assertTrue(s[1].error.startswith("before the error\nCode execution failed: error\n"), s[1].error)
        self.assertIn("ZeroDivisionError: division by zero", s[1].error)
        self.assertIn('line 2', s[1].error)
        self.assertEqual(s[2].error, "Code execution failed: blocked\n"
                         "precheck: blocked: import subprocess (process creation denied by policy) (line 1)\n"
                         "runner: the pre-check refused the tool (1 finding); none of it ran")
        self.assertEqual(s[3].observation, "Execution logs:\n84\nLast output from code snippet:\nNone")
        self.assertEqual((s[4].output, s[4].observation),
                         ("{'region': 'n', 'amount': '10'}",
                          "Execution logs:\nLast output from code snippet:\n{'region': 'n', 'amount': '10'}"))
        self.assertEqual(s[5].observation, "Execution logs:\nFalse 2\nLast output from code snippet:\nNone")
        self.assertTrue(s[6].is_final_answer)
        self.assertEqual(agent.final, {"total": 42, "doubled": 84, "unit": "EUR"})
        self.assertEqual([r.status for r in ex.results], ["ok", "error", "blocked", "ok", "ok", "ok", "ok"])
        self.assertEqual({k: ex.state[k] for k in ("total", "doubled", "unit")}, {"total": 42, "doubled": 84,
                                                                                  "unit": "EUR"})
        self.assertIsInstance(ex("print('again')\n"), CodeOutput)  # the executor goes on after a final answer

    def test_last_expression_lines_kept(self):
        # The statement rewritten keeps every line's number: an error in it names its own line.
        ex = AnvilExecutor(socket=SOCKET)
        with self.assertRaises(AnvilExecutionError) as cm:
            ex("x = 1\n(x +\n  undefined_name)\n")
        self.assertIn('File "<tool>", line 3, in <module>', str(cm.exception))  # where undefined_name is
        self.assertIn("NameError: name 'undefined_name' is not defined", str(cm.exception))
        self.assertEqual(ex("y = 2\ny * 21\n").output, "42")
        self.assertEqual(ex("import json\njson.dumps([1])\n").output, "'[1]'")
        self.assertIsNone(ex("z = 3\n").output)  # the control: no expression last, no output

    def test_error_is_the_executions(self):
        ex = AnvilExecutor(anvil=Anvil(SOCKET))
        ex.send_tools({"final_answer": FinalAnswerTool()})
        with self.assertRaises(AnvilExecutionError) as cm:
            ex("raise KeyError('amount_usd')\n")
        self.assertEqual(cm.exception.result.status, "error")
        self.assertIn("KeyError: 'amount_usd'", str(cm.exception))

    def test_tools_and_variables_refused_up_front(self):
        ex = AnvilExecutor(socket=SOCKET)
        with self.assertRaises(ValueError) as cm:
            ex.send_tools({"final_answer": FinalAnswerTool(), "web_search": object()})
        self.assertIn("web_search cannot be sent", str(cm.exception))
        ex.send_tools({"final_answer": FinalAnswerTool()})  # the control: CodeAgent's own tool is accepted
        with self.assertRaises(ValueError) as cm:
            ex.send_variables({"s": {1, 2}})
        self.assertEqual(str(cm.exception), "send_variables: 's' Object of type set is not JSON serializable")
        # A name Anvil refuses: the broker's refusal, an exception of Anvil's (not an action's error).
        ex.send_variables({"print": 1})
        with self.assertRaises(Refused) as cm:
            ex("x = 1\n")
        self.assertEqual(cm.exception.message, "variables refused: 'print' shadows a builtin")


if __name__ == "__main__":
    unittest.main(verbosity=2)
