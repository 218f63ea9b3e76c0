"""Result requests: a stage asks the projector partition that owns a workflow to decide a
job's result at once, over a core NATS request, instead of storing it in a stream first.

`wf.rq.<slot>.result.<type>.<key>.<stage>`: the stage computes the slot of the workflow's
routing key as the broker would (`partitions.slot_of`), so the request reaches the partition
that owns the slot, subscribed to its slots' request subjects alone. The answer is one of:
- `decided`: the result was committed (or refused and recorded, or found already decided)
  before the answer was sent: the stage may acknowledge its job;
- `not_taken`: nothing was decided (a dependency down, a workflow not there yet, anything
  the projector would wait out or dead-letter): the stage publishes the same result on its
  inbound subject, the durable path, which handles all of those as it always has.
No answer (no partition subscribed, a lost reply, a timeout) is `not_taken` too. The result's
event id derives from its job, so a result decided over both paths is decided once and its
second copy acknowledged as a duplicate.

Only stages may publish on these subjects, each only on its own; the projector re-checks the
sender, the key and the slot exactly as for the mapped inbound subject a request stands for
(`as_inbound`).
"""

from __future__ import annotations

from interlock.contracts import subjects
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.partitions import Partition

RQ_PREFIX = "wf.rq"
DECIDED = b"decided"
NOT_TAKEN = b"not_taken"
QUEUE = "projector"
"""The queue group of every partition's request subscriptions: a slot's requests reach one
subscriber, even while two projectors of one partition overlap in a restart."""


def result_request(slot: int, workflow_type: str, key: str, stage: str) -> str:
    """Where `stage` asks for the result of a job of the workflow with routing `key`
    (in slot `slot`) to be decided."""
    return f"{RQ_PREFIX}.{slot}.{subjects.RESULT}.{workflow_type}.{key}.{stage}"


def result_request_grant(workflow_type: str, stage: str) -> str:
    """What a stage may publish to ask for its results to be decided (any slot, any key)."""
    return request_grant(subjects.RESULT, workflow_type, stage)


def partition_requests(partition: Partition) -> list[str]:
    """The result request subjects a partition subscribes to."""
    return slot_subjects(subjects.RESULT, partition)


def request_grant(kind: str, workflow_type: str, stage: str) -> str:
    """What a stage may publish to send requests of `kind` (`wf.rq.<slot>.<kind>...`) about
    its own jobs: any slot, any key."""
    return f"{RQ_PREFIX}.*.{kind}.{workflow_type}.*.{stage}"


def slot_subjects(kind: str, partition: Partition) -> list[str]:
    """The subjects of requests of `kind` a partition subscribes to: its own slots' (all with
    one)."""
    if partition.count == 1:
        return [f"{RQ_PREFIX}.*.{kind}.>"]
    return [f"{RQ_PREFIX}.{slot}.{kind}.>" for slot in partition.slots]


def as_inbound(subject: str) -> str:
    """The mapped inbound subject a result request stands for
    (`wf.in.slot.<slot>.result.<type>.<key>.<stage>`), which the projector checks as it
    checks the broker's; `MalformedMessage` (`bad_subject`) for anything else."""
    prefix, _, rest = subject.partition(f"{RQ_PREFIX}.")
    tokens = rest.split(".")
    if prefix or len(tokens) != 5 or tokens[1] != subjects.RESULT:
        raise MalformedMessage("bad_subject", "not a result request subject")
    inbound = f"{subjects.IN_PREFIX}.{subjects.SLOT_TOKEN}.{rest}"
    subjects.parse_inbound(inbound)  # the same checks: slot, key and tokens
    return inbound
