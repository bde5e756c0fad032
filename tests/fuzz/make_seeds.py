#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Regenerates the checked-in seed corpora tests/corpus/{counter,memparse}/.
# Run it after changing the input format of fuzz_counter.c (described at
# the top of that file):   python3 tests/fuzz/make_seeds.py
# A counter seed named T1-T3, P1, E5, ... replays the case of that id in
# docs/conformance.md; selftest-tree is its selftest protection tree.
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, '..', 'corpus')

OPS = ['charge', 'try_charge', 'cancel', 'uncharge', 'set_max', 'set_min',
       'set_low', 'set_high', 'reset_watermark', 'calculate_protection']
PCM = 'pcm'


def amount(v):
    """Encode a page count the way amount() in fuzz_counter.c decodes it."""
    if v == PCM:
        return bytes([0xa0 | 16])
    if 0 <= v < 32:
        return bytes([v])
    if 0 <= v < 65536:
        return bytes([0x80, v >> 8, v & 0xff])
    return bytes([0xe0]) + (v % 2**64).to_bytes(8, 'big')


def tree(*counters):
    """counters: (parent index or -1, protection, track) in index order."""
    out = bytes([len(counters) - 1])
    for i, (parent, prot, track) in enumerate(counters):
        if i:
            out += bytes([parent + 1])
        out += bytes([(1 if prot else 0) | (2 if track else 0)])
    return out


def op(name, target, *args, null_fail=False):
    out = bytes([OPS.index(name) | (0x80 if null_fail else 0), target])
    if name == 'calculate_protection':
        root, recursive = args
        return out + bytes([root, 1 if recursive else 0])
    if name == 'reset_watermark':
        return out
    return out + amount(args[0])


def chain(track_leaf=True):
    return tree((-1, True, False), (0, True, False), (1, True, track_leaf))


MB = 256
SEEDS = {
    'T1-T3': chain() + op('set_max', 1, 10) + op('try_charge', 2, 4) +
    op('try_charge', 2, 7) + op('try_charge', 2, 0) + op('charge', 2, 8) +
    op('try_charge', 2, 0) + op('set_max', 1, 11) + op('set_max', 1, 12),
    'T4-cancel': tree((-1, True, False), (0, True, False)) +
    op('charge', 1, 3) + op('cancel', 1, 5) + op('uncharge', 1, 5),
    'T5': chain() + op('set_max', 1, 1) + op('try_charge', 2, 2) +
    op('try_charge', 1, 2),
    'T6': tree((-1, True, True)) + op('set_max', 0, 10) +
    op('charge', 0, 6) + op('try_charge', 0, 4) + op('try_charge', 0, 1),
    'P1': tree((-1, True, False), (0, True, False), (1, True, False),
               (1, True, False)) +
    op('set_min', 2, 75) + op('set_min', 3, 25) + op('charge', 2, 50) +
    op('charge', 3, 50) + op('uncharge', 2, 30) + op('set_min', 2, 0),
    'P2': tree((-1, True, False)) + op('set_min', 0, 9) +
    op('set_low', 0, 9) + op('charge', 0, 5),
    'P3': tree((-1, False, False), (0, False, False)) +
    op('charge', 1, 20) + op('set_min', 1, 7) + op('set_low', 1, 30) +
    op('uncharge', 1, 10),
    'selftest-tree': tree((-1, True, False), (0, True, False),
                          (1, True, False), (1, True, False),
                          (1, True, False), (1, True, False)) +
    op('set_max', 0, 200 * MB) +
    b''.join(op(s, i, v) for i, v in ((1, 50 * MB), (2, 75 * MB),
                                      (3, 25 * MB), (5, 500 * MB))
             for s in ('set_min', 'set_low')) +
    op('try_charge', 2, 50 * MB) + op('try_charge', 3, 50 * MB) +
    op('try_charge', 4, 50 * MB) + op('calculate_protection', 0, 0, False) +
    op('calculate_protection', 0, 0, True),
    'E5': tree((-1, True, False), (0, True, False), (1, True, False)) +
    op('set_low', 1, PCM) + op('charge', 2, 262144) +
    op('charge', 1, 270336 - 262144) + op('calculate_protection', 0, 0, True),
    'underflow-chain': chain() + op('charge', 0, 5) + op('charge', 2, 2) +
    op('uncharge', 2, 4) + op('cancel', 0, 9),
    'huge-wrap': chain() + op('charge', 2, 2**63 + 5) +
    op('try_charge', 2, 2**63) + op('uncharge', 2, 2**64 - 3) +
    op('reset_watermark', 1),
    'set-max-pcm': chain() + op('set_max', 0, PCM) +
    op('try_charge', 2, PCM) + op('try_charge', 2, 1) +
    op('set_high', 1, PCM),
    'fail-null': chain() + op('set_max', 0, 3) +
    op('try_charge', 2, 9, null_fail=True) + op('try_charge', 2, 3),
    'recursive-float': tree((-1, True, False), (0, True, False),
                            (1, True, False), (1, True, False)) +
    op('set_low', 1, 100) + op('charge', 2, 60) + op('charge', 3, 140) +
    op('set_low', 2, 20) + op('calculate_protection', 0, 0, True) +
    op('calculate_protection', 0, 1, True),
}


def write(directory, name, data):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), 'wb') as f:
        f.write(data)


MEMPARSE = ['max', '', '4095', '4096', '8191', '1k', '4K', '4k', '1M', '1m',
            '100M', '1G', '1T', '1E', '8E', '16E', '9223372036854775807',
            '18446744073709551615', '18446744073709551616', '0x1000',
            '0X1000', '010000', 'm', 'k', '0x', '08', '1KB', ' 1M', '1M ',
            '-1', '+4096', 'MAX', 'max\n', '1.5G', '0xfE', '0e', '0x1EK']


def memparse_name(i, s):
    """Numbered, so that names differing in case only stay distinct."""
    safe = ''.join(c if c.isalnum() else '_%02x' % ord(c) for c in s)
    return 'row-%02d-%s' % (i, safe or 'empty')


def main():
    counter = os.path.join(CORPUS, 'counter')
    for name, data in SEEDS.items():
        write(counter, name, data)
    rng = random.Random(2026)
    for i in range(20):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(8, 64)))
        write(counter, 'random-%02d' % i, data)
    memparse = os.path.join(CORPUS, 'memparse')
    for i, s in enumerate(MEMPARSE):
        write(memparse, memparse_name(i, s), s.encode())
    write(memparse, 'row-minus1_keyword_v1', b'-1\0-1')


if __name__ == '__main__':
    main()
