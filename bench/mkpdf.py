#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the PDF that pattern_heap renders with pdftoppm: pages of raster images
(decoded and scaled into big heap buffers) and many vector marks. Deterministic: fixed
seeds and no creation date, so every build renders the same pixels.

    mkpdf.py OUT.pdf [PAGES]"""
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402


def main():
    out, pages = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:600, 0:600] / 600.0
    with PdfPages(out, metadata={"CreationDate": None, "ModDate": None,
                                 "Producer": "mmext", "Creator": "mmext"}) as pdf:
        for p in range(pages):
            fig, axes = plt.subplots(2, 3, figsize=(11, 8.5))
            for i, ax in enumerate(axes.flat[:5]):
                k = p * 5 + i
                img = np.stack([np.sin(6 * x + k) ** 2, np.cos(5 * y - k) ** 2,
                                np.sin(4 * (x + y) + k) ** 2], axis=-1)
                ax.imshow(np.clip(img + rng.normal(0, 0.03, img.shape), 0, 1),
                          interpolation="nearest")
                ax.set_title(f"image {k + 1}: 600x600 RGB", fontsize=8)
            t = np.linspace(0, 20, 3000)
            axes.flat[5].plot(t, np.sin(t * (p + 1)) + rng.normal(0, 0.1, t.size), lw=0.5)
            axes.flat[5].set_title("3000-point line", fontsize=8)
            pdf.savefig(fig)
            plt.close(fig)

if __name__ == "__main__":
    main()
