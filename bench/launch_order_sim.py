"""Makespan of causal attention launches by the order their CTAs start in: list scheduling (each
CTA starts on the first free slot, in launch order) against the bound total work / slots. A CTA's
work is the blocks it visits plus `--fixed` for its fixed cost (twice that in the backward, whose
CTAs also load K and V and store dK and dV). Compares the head-by-head order
(forward: longest query block first within each head; backward: key block 0 first within each
key/value head) with the sectioned order of templates/common/work_order.h (entries in sections
whose shared data fits 32 MB of L2, at most 32, block by block within a section). The figures of
bench/NOTES.md ("Attention", "Attention backward": CTA order) come from it.
Usage: python3 bench/launch_order_sim.py [--fixed 1.0]
Python's standard library only."""
import argparse
import heapq

SECTION_BYTES = 32 << 20
SECTION_ENTRIES_MAX = 32
FWD = [(32, 16, 16, 512, 128, 128, 128), (16, 16, 16, 1024, 128, 128, 128),
       (8, 16, 16, 2048, 128, 128, 128), (4, 16, 16, 4096, 128, 128, 128),
       (2, 16, 16, 8192, 128, 128, 128), (1, 16, 16, 16384, 128, 128, 128),
       (32, 32, 32, 512, 64, 64, 64), (8, 32, 32, 2048, 64, 192, 128),
       (1, 32, 32, 16384, 64, 192, 128)]
BWD = [(32, 16, 16, 512, 128, 64, 128), (8, 16, 16, 2048, 128, 64, 128),
       (2, 16, 16, 8192, 128, 64, 128), (1, 16, 16, 16384, 128, 64, 128),
       (1, 32, 8, 8192, 128, 64, 128), (2, 32, 32, 8192, 64, 128, 128)]


def makespan(works, slots):
    free = [0.0] * slots
    end = 0.0
    for w in works:
        t = heapq.heappop(free) + w
        end = max(end, t)
        heapq.heappush(free, t)
    return end * slots / sum(works)


def section_entries(bytes_per_entry):
    section = 1
    while section < SECTION_ENTRIES_MAX and 2 * section * bytes_per_entry <= SECTION_BYTES:
        section *= 2
    return section


def head_by_head(block_work, entries):
    return [w for _ in range(entries) for w in block_work]


def sectioned(block_work, entries, section):
    order, width_max = [], max(1, min(section, entries))
    for first in range(0, entries, width_max):
        width = min(width_max, entries - first)
        order += [w for w in block_work for _ in range(width)]
    return order


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixed", type=float, default=1.0, help="a CTA's fixed cost, in blocks")
    a = ap.parse_args()
    print("forward, causal: B Hq Hkv N d Br Bc | slots | head by head | sectioned (section)")
    for b, hq, hkv, n, d, bm, bn in FWD:
        m_blocks, entries = n // bm, b * hq
        # The longest query block (the last rows) first.
        block_work = [(m_blocks - x) * bm / bn + a.fixed for x in range(m_blocks)]
        section = section_entries(2 * n * d * 2 // (hq // hkv))
        for slots in (132, 264):
            old = head_by_head(block_work, entries)
            new = sectioned(block_work, entries, section)
            print(f"  {b} {hq} {hkv} {n} {d} {bm} {bn} | {slots} | {makespan(old, slots):.3f} | "
                  f"{makespan(new, slots):.3f} ({min(section, entries)})")
    print("backward, causal: B Hq Hkv N d Br Bc | head by head | sectioned (section)")
    for b, hq, hkv, n, d, bm, bn in BWD:
        n_blocks, m_blocks, group, entries = n // bn, n // bm, hq // hkv, b * hkv
        # Key block 0, which every query block sees, first.
        block_work = [group * (m_blocks - x * bn // bm) + 2 * a.fixed for x in range(n_blocks)]
        section = section_entries(2 * n * d * 2 * group)
        old = head_by_head(block_work, entries)
        new = sectioned(block_work, entries, section)
        print(f"  {b} {hq} {hkv} {n} {d} {bm} {bn} | {makespan(old, 132):.3f} | "
              f"{makespan(new, 132):.3f} ({min(section, entries)})")


if __name__ == "__main__":
    main()
