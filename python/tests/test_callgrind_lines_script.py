"""scripts/callgrind-lines.py, the line profiler PERFORMANCE.md uses: how it
reads a callgrind profile (the part that needs no binary)."""
import importlib.util
import pathlib

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "callgrind-lines.py"


def load_script():
    spec = importlib.util.spec_from_file_location("callgrind_lines", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A profile as `valgrind --tool=callgrind --dump-instr=yes` writes it:
# positions "instruction line", compressed (+n, -n, *); the simulator's
# object first named where libc calls into it (`cob=`); a call's
# inclusive cost on the line after `calls=`.
PROFILE = """\
version: 1
positions: instr line
events: Ir
ob=(1) /usr/lib/x86_64-linux-gnu/libc.so.6
fl=(1) ???
fn=(1) memcpy
0x1000 0 7
cob=(2) /tmp/dbg/release/wbsim
cfi=(2) ???
cfn=(2) main
calls=1 0x4000 0
0x1004 0 900
ob=(2)
fl=(2) ???
fn=(2) main
0x4000 12 5
+8 13 3
* * 2
-4 12 1
calls=3 0x1000 0
+2 14 1000
+2 14 4
"""


def test_own_costs_of_the_named_object_only_and_never_a_calls_cost(tmp_path):
    cg = load_script()
    profile = tmp_path / "cg.out"
    profile.write_text(PROFILE)
    cost = cg.self_cost_by_address(str(profile), "wbsim")
    # 0x4000: 5; +8 = 0x4008: 3, and * again 2; -4 = 0x4004: 1; the call
    # line's 1000 (at +2, 0x4006) is the callee's and is left out; +2 =
    # 0x4008: 4 more. libc's 7 and the 900 of its call are not counted.
    assert cost == {0x4000: 5, 0x4008: 3 + 2 + 4, 0x4004: 1}
    assert cg.self_cost_by_address(str(profile), "libc") == {0x1000: 7}


def test_our_lines_come_innermost_first_from_crates():
    cg = load_script()
    chain = [
        "/rustc/abc/library/core/src/slice/index.rs:12",
        "/work/main/crates/wbsim/src/mm/frames.rs:81",
        "/work/main/crates/wbsim/src/mm/page.rs:230",
    ]
    assert cg.ours(chain) == ["wbsim/src/mm/frames.rs:81", "wbsim/src/mm/page.rs:230"]
    assert cg.position("0x10", 0) == 16
    assert cg.position("+0x10", 16) == 32
    assert cg.position("-3", 32) == 29
    assert cg.position("*", 29) == 29


# `objdump -d --no-show-raw-insn` lines, and one with the raw bytes.
DISASSEMBLY = """\
00000000004e38c0 <_ZN5wbsim9writeback4pass17write_cache_pages>:
  4e38da:\txor    %edx,%edx
  4e38dc:\tdiv    %esi
  4e38de:\tmov    %edx,%edi
  4e38e4:\tidivq  0x8(%rsp)
  4e38ea:\t48 f7 f1             \tdiv    %rcx
  4e38f0:\tcall   4e0000 <divide_by_zero>
"""


def test_mnemonics_are_matched_on_the_instruction_not_its_operands():
    cg = load_script()
    assert cg.addresses_with_mnemonic(DISASSEMBLY, r"^i?div") == {0x4E38DC, 0x4E38E4, 0x4E38EA}
    assert cg.addresses_with_mnemonic(DISASSEMBLY, r"^mov$") == {0x4E38DE}
