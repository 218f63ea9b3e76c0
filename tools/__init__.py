"""Programs that drive a whole stack from the outside, the way upstream systems and approvers
would: the demo (`interlock demo`: named scenarios and case files) and the benchmark
(`interlock bench`). They use the composition root's public modules and never its CLI."""
