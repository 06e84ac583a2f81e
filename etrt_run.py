import sys, numpy as np
sys.path.insert(0, "/work/wt/zoo/tests/support")
import etrt_ctypes
m = etrt_ctypes.Library().load_program(sys.argv[1]).load_method("forward")
tok = 5; toks = []
for pos in range(16):
    out = m.execute([np.array([[tok]], dtype=np.int64), np.array([pos], dtype=np.int64)])[0]
    tok = int(out.argmax()); toks.append(tok)
    if pos == 0: print(out[0, :4])
print(toks)
