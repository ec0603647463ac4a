# Synthetic SPC trace written by hand for zombiesim's tests, NOT a real capture.
# It follows the SPC trace file format: ASU,LBA,Size,Opcode,Timestamp[,optional fields]
# (LBA in 512-byte sectors, Size in bytes, Opcode r/R/w/W, Timestamp in seconds).
0,20941264,8192,W,0.551706
0,20939840,8192,w,0.554041
1,3436288,15872,r,0.557294
0,20939856,4096,W,0.560000,optional-field
2,1048576,512,R,0.601120
1,3436320,4096,W,1.000000
