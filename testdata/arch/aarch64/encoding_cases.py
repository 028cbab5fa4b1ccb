#!/usr/bin/env python3
# Prints the `case!` rows of tests.rs: run `python3 encoding_cases.py` and
# paste its output over the CASES table.
# Builds the encoding test table: each case's instruction before and after,
# both assembled by llvm-mc-14; the "after" immediate computed here from the
# psABI formula (independently of the Rust code).
import subprocess, re

def asm(lines):
    src = "\n".join(lines) + "\n"
    out = subprocess.run(["llvm-mc-14", "-triple=aarch64-linux-gnu", "-show-encoding"], input=src,
                         capture_output=True, text=True)
    if out.returncode != 0 or out.stderr:
        raise SystemExit(out.stderr)
    words = []
    for m in re.finditer(r"encoding: \[(0x[0-9a-f]+),(0x[0-9a-f]+),(0x[0-9a-f]+),(0x[0-9a-f]+)\]", out.stdout):
        b = [int(x, 16) for x in m.groups()]
        words.append(b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24)
    assert len(words) == len(lines), (lines, out.stdout)
    return words

def page(x): return x & ~0xfff
M64 = (1 << 64) - 1

P = 0x41_2344
cases = []  # (kind, before, after, p, s, a, g, got)
def case(kind, before, after, p=P, s=0, a=0, g=0, got=0):
    cases.append((kind, before, after, p, s, a, g, got))

# ADRP
S, A = 0x52_3a10, 0x10
d = page(S + A) - page(P)
for k in ["AdrPrelPgHi21", "AdrPrelPgHi21Nc"]:
    case(k, "adrp x1, #0", f"adrp x1, #{d}", s=S, a=A)
d = page(0x40_0ff0) - page(P)
case("AdrPrelPgHi21", "adrp x1, #0", f"adrp x1, #{d}", s=0x40_0ff0)
# Pages, not (S + A - P) >> 12: P late in its page, S early in its own.
case("AdrPrelPgHi21", "adrp x1, #0", f"adrp x1, #{page(0x50_0010) - page(0x41_2ffc)}", p=0x41_2ffc, s=0x50_0010)
G = 0x7f_f008
# The addend moves the address whose page is taken, as lld and mold read G(GDAT(S+A)).
case("AdrGotPage", "adrp x16, #0", f"adrp x16, #{page(G + 0xff8) - page(P)}", s=0x99_9000, g=G, a=0xff8)
case("Ld64GotLo12Nc", "ldr x0, [x0, #0]", f"ldr x0, [x0, #{(G + 0x8) & 0xfff}]", s=0x99_9000, g=G, a=0x8)
d = page(G) - page(P)
for k in ["AdrGotPage", "TlsGdAdrPage21", "TlsLdAdrPage21", "TlsIeAdrGotTpRelPage21", "TlsDescAdrPage21", "TlvpPage21"]:
    case(k, "adrp x16, #0", f"adrp x16, #{d}", s=0x99_9000, g=G)
# ADR
case("AdrPrelLo21", "adr x2, #0", f"adr x2, #{0x40_2301 - P}", s=0x40_2301)
G = 0x41_8008
for k in ["TlsGdAdrPrel21", "TlsLdAdrPrel21", "TlsDescAdrPrel21"]:
    case(k, "adr x0, #0", f"adr x0, #{G - P}", s=0x99_9000, g=G)
# ADD
case("AddAbsLo12Nc", "add x3, x4, #0", f"add x3, x4, #{(0x52_3a10 + 0x10) & 0xfff}", s=0x52_3a10, a=0x10)
case("AddAbsLo12Nc", "add w3, w4, #0", f"add w3, w4, #{(0x52_3a10 + 0x10) & 0xfff}", s=0x52_3a10, a=0x10)
case("PageOffset12", "add x3, x4, #0", f"add x3, x4, #{(0x52_3a10 + 0x10) & 0xfff}", s=0x52_3a10, a=0x10)
G = 0x7f_f008
for k in ["TlsGdAddLo12Nc", "TlsLdAddLo12Nc", "TlsDescAddLo12"]:
    case(k, "add x0, x0, #0", f"add x0, x0, #{G & 0xfff}", s=0x99_9000, g=G)
for k in ["TlsLeAddTpRelLo12", "TlsLdAddDtpRelLo12"]:
    case(k, "add x0, x1, #0", f"add x0, x1, #{0x10 + 0x7f8}", s=0x10, a=0x7f8)
for k in ["TlsLeAddTpRelLo12Nc", "TlsLdAddDtpRelLo12Nc"]:
    case(k, "add x0, x1, #0", f"add x0, x1, #{0x12_3458 & 0xfff}", s=0x12_3458)
for k in ["TlsLeAddTpRelHi12", "TlsLdAddDtpRelHi12"]:
    case(k, "add x0, x1, #0, lsl #12", f"add x0, x1, #{(0x12_3458 >> 12) & 0xfff}, lsl #12", s=0x12_3458)
    case(k, "add x0, x1, #0, lsl #12", f"add x0, x1, #{(0xff_f123 >> 12) & 0xfff}, lsl #12", s=0xff_f123)
# LDST, absolute
LDST = {0: ["ldrb w0, [x1, #{}]", "strb w0, [x1, #{}]", "ldrsb x0, [x1, #{}]", "ldr b0, [x1, #{}]"],
        1: ["ldrh w0, [x1, #{}]", "ldrsh w0, [x1, #{}]", "str h0, [x1, #{}]"],
        2: ["ldr w0, [x1, #{}]", "ldrsw x0, [x1, #{}]", "str s0, [x1, #{}]"],
        3: ["ldr x0, [x1, #{}]", "str x0, [x1, #{}]", "ldr d0, [x1, #{}]", "prfm pldl1keep, [x1, #{}]"],
        4: ["ldr q0, [x1, #{}]", "str q0, [x1, #{}]"]}
BITS = {0: 8, 1: 16, 2: 32, 3: 64, 4: 128}
for n, forms in LDST.items():
    x = (0x52_3a10 + 0x7) & ~((1 << n) - 1)
    for f in forms:
        case(f"Ldst{BITS[n]}AbsLo12Nc", f.format(0), f.format(x & 0xfff), s=x - 4, a=4)
        case("PageOffset12", f.format(0), f.format(x & 0xfff), s=x - 4, a=4)
    f = forms[0]
    for model in ["TlsLe{}TpRelLo12", "TlsLd{}DtpRelLo12"]:
        base = model.format(f"Ldst{BITS[n]}")
        x = 0x10 + (0x7e0 & ~((1 << n) - 1))
        case(base, f.format(0), f.format(x), s=0x10, a=x - 0x10)
        x = 0x12_3450
        case(base + "Nc", f.format(0), f.format(x & 0xfff), s=x)
# GOT loads
G = 0x7f_f008
for k in ["Ld64GotLo12Nc", "TlsIeLd64GotTpRelLo12Nc", "TlsDescLd64Lo12", "TlvpPageOffset12"]:
    case(k, "ldr x0, [x0, #0]", f"ldr x0, [x0, #{G & 0xfff}]", s=0x99_9000, g=G)
GOT = 0x7f_e010
case("Ld64GotPageLo15", "ldr x0, [x0, #0]", f"ldr x0, [x0, #{G - page(GOT)}]", s=0x99_9000, g=G, got=GOT)
# literals
case("LdPrelLo19", "ldr w0, #0", f"ldr w0, #{0x1234}", s=P + 0x1234)
case("LdPrelLo19", "ldr q3, #0", f"ldr q3, #{-0x1234 - 0x10}", s=P - 0x1234, a=-0x10)
case("LdPrelLo19", "prfm pldl1keep, #0", f"prfm pldl1keep, #{0x40}", s=P + 0x40)
G = P - 0x10000
for k in ["GotLdPrel19", "TlsLdLdPrel19", "TlsIeLdGotTpRelPrel19", "TlsDescLdPrel19"]:
    case(k, "ldr x1, #0", f"ldr x1, #{G - P}", s=0x99_9000, g=G)
# branches
case("TstBr14", "tbnz x5, #40, #0", f"tbnz x5, #40, #{0x7ffc}", s=P + 0x7ffc)
case("TstBr14", "tbz w5, #3, #0", f"tbz w5, #3, #{-0x8000}", s=P - 0x8000)
case("CondBr19", "b.ne #0", f"b.ne #{-0x100000}", s=P - 0x100000)
case("CondBr19", "cbz x0, #0", f"cbz x0, #{0xffffc}", s=P + 0xffffc)
case("CondBr19", "cbnz w7, #0", f"cbnz w7, #{0x40}", s=P + 0x30, a=0x10)
case("Jump26", "b #0", f"b #{0x7fffffc}", s=P + 0x7fffffc)
case("Jump26", "bl #0", f"bl #{-0x40}", s=P - 0x40)
case("Call26", "bl #0", f"bl #{-0x8000000}", s=P - 0x8000000)
case("Call26", "b #0", f"b #{0x1000}", s=P + 0x1000)
# MOVW unsigned
X = 0x7f12_3456_789a
case("MovwUabsG0", "movz x0, #0", "movz x0, #0xffff", s=0xfff0, a=0xf)
case("MovwUabsG0", "movk w0, #0", "movk w0, #0x1234", s=0x1234)
case("MovwUabsG0Nc", "movk x0, #0", f"movk x0, #{X & 0xffff}", s=X)
case("MovwUabsG0Nc", "movz x0, #0", f"movz x0, #{X & 0xffff}", s=X)
case("MovwUabsG1", "movz x0, #0, lsl #16", "movz x0, #0xffff, lsl #16", s=0xffff_0000)
case("MovwUabsG1Nc", "movk x0, #0, lsl #16", f"movk x0, #{(X >> 16) & 0xffff}, lsl #16", s=X)
case("MovwUabsG2", "movz x0, #0, lsl #32", f"movz x0, #{(X >> 32) & 0xffff}, lsl #32", s=X)
case("MovwUabsG2Nc", "movk x0, #0, lsl #32", f"movk x0, #{(X >> 32) & 0xffff}, lsl #32", s=X)
case("MovwUabsG3", "movk x0, #0, lsl #48", f"movk x0, #{0x1000}, lsl #48", s=X, a=0x1000_0000_0000_0000)
# MOVW signed: MOVZ when X >= 0, else MOVN with the bits of !X
def movw_signed(x, g):
    if x >= 0:
        return f"movz x0, #{(x >> (16 * g)) & 0xffff}, lsl #{16 * g}"
    return f"movn x0, #{((~x) >> (16 * g)) & 0xffff}, lsl #{16 * g}"
def movk(x, g):
    return f"movk x0, #{(x >> (16 * g)) & 0xffff}, lsl #{16 * g}"
case("MovwSabsG0", "movz x0, #0", movw_signed(-2, 0), s=0, a=-2)
case("MovwSabsG0", "movn x0, #0", movw_signed(5, 0), s=5)
case("MovwSabsG1", "movz x0, #0, lsl #16", movw_signed(-0x12345, 1), s=0, a=-0x12345)
case("MovwSabsG2", "movn x0, #0, lsl #32", movw_signed(X, 2), s=X)
case("MovwPrelG0", "movz x0, #0", movw_signed(-0x100, 0), s=P - 0x100)
case("MovwPrelG0Nc", "movk x0, #0", movk(-0x100 & M64, 0), s=P - 0x100)
case("MovwPrelG1", "movz x0, #0, lsl #16", movw_signed(0x7654_3210, 1), s=P + 0x7654_3210)
case("MovwPrelG1Nc", "movk x0, #0, lsl #16", movk(-0x100 & M64, 1), s=P - 0x100)
case("MovwPrelG2", "movz x0, #0, lsl #32", movw_signed(-(1 << 32), 2), s=P, a=-(1 << 32))
case("MovwPrelG2Nc", "movk x0, #0, lsl #32", movk(-0x100 & M64, 2), s=P - 0x100)
case("MovwPrelG3", "movz x0, #0, lsl #48", movw_signed(-0x100, 3), s=P - 0x100)
case("MovwPrelG3", "movn x0, #0, lsl #48", movw_signed(0x1234 << 48, 3), s=P, a=0x1234 << 48)
for model in ["TlsLeMovwTpRel", "TlsLdMovwDtpRel"]:
    x = 0x12_3456_7890
    case(model + "G2", "movz x0, #0, lsl #32", movw_signed(x, 2), s=x)
    case(model + "G1", "movz x0, #0, lsl #16", movw_signed(0x1234_5678, 1), s=0x1234_5678)
    case(model + "G1Nc", "movk x0, #0, lsl #16", movk(0x1234_5678, 1), s=0x1234_5678)
    case(model + "G0", "movn x0, #0", movw_signed(0x5678, 0), s=0x5678)
    case(model + "G0", "movz x0, #0", movw_signed(-0x10, 0), s=0, a=-0x10)
    case(model + "G0Nc", "movk x0, #0", movk(0x1234_5678, 0), s=0x1234_5678)

befores = asm([c[1] for c in cases])
afters = asm([c[2] for c in cases])
def h(v):
    v &= M64
    digits = f"{v:x}"
    groups = []
    while digits:
        groups.insert(0, digits[-4:])
        digits = digits[:-4]
    return "0x" + "_".join(groups)
def hs(v):
    return ("-" + h(-v)) if v < 0 else h(v)
for (kind, b, a_, p, s, a, g, got), wb, wa in zip(cases, befores, afters):
    shown = re.sub(r"(?<!lsl )#(-?)(\d+)", lambda m: "#" + m.group(1) + (hex(int(m.group(2))) if int(m.group(2)) > 9 else m.group(2)), a_)
    shown = re.sub(r", lsl #0$", "", shown)
    print(f'    case!({kind}, {wb:#010x}, {wa:#010x}, "{shown}", [{h(p)}, {h(s)}, {h(g)}, {h(got)}], {hs(a)}),')

