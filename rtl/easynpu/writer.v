// The ofmap write queue and its writer (C model: the write queues and
// sim_sched_writers in src/sim/easynpu/scheduler.c, the words a final pass
// produces from gen_runs / sim_runs_direct in pe.c; docs/microarch.md §11.7,
// §11.8).  A final pass's issue pushes, per active virtual row, the
// requantized word of its output pixel: lanes [0, n) hold channels c0 ..
// c0 + n - 1, which land in word c0 / P of the pixel from lane c0 % P on
// and, when they cross a word's end, in the next word from lane 0 (two
// byte-enabled writes; a group convolution whose groups are not whole
// words, or lane groups).  The lanes after the layer's last channel are
// written 0 with its word (zero fill).  A word is ready LAT = D + Rq cycles
// after its issue; the writer writes the oldest one when it is ready, one a
// cycle, on the DTCM write port (the main bus gives writes priority, so the
// port is never denied).  The queue holds CAP = psum_depth words counting
// those in flight; a cycle that would push more than the room left after
// this cycle's write is held back by the PE controller (room), and a cycle
// pushing more than CAP words needs an empty queue.
module writer #(
    parameter P = 16,
    parameter NV = 4,
    parameter LBW = 4,
    parameter VW = 3,
    parameter MAW = 14,
    parameter DEPTH = 64,  // CAP
    parameter LAT = 4,
    parameter QW = 7      // bits of a word count (up to DEPTH + 2 NV)
) (
    input wire clk,
    input wire rst,
    input wire req,   // the PE controller's pass is final (its cycles write)
    input wire push,  // ... and issues now
    input wire [VW-1:0] nrows,
    input wire [LBW:0] n,
    input wire [MAW-1:0] c0w,
    input wire [LBW-1:0] c0l,
    input wire [MAW*NV-1:0] pix,     // per virtual row: its output pixel's first word
    input wire [8*P*NV-1:0] qv,      // per virtual row: the requantized lanes (0 past n)
    input wire [MAW-1:0] co_w,       // the layer's channels: co = co_w * P + co_l
    input wire [LBW-1:0] co_l,
    output wire room,
    output wire wr_en,
    output wire [MAW-1:0] wr_addr,
    output wire [P-1:0] wr_be,
    output wire [8*P-1:0] wr_data,
    output reg [QW-1:0] count
);
    localparam RING = DEPTH + 2 * NV;
    localparam TSW = 16;  // a word waits at most LAT + RING cycles: no wrap
    reg [MAW-1:0] m_addr[0:RING-1];
    reg [P-1:0] m_be[0:RING-1];
    reg [8*P-1:0] m_data[0:RING-1];
    reg [TSW-1:0] m_ts[0:RING-1];
    reg [QW-1:0] head;
    reg [TSW-1:0] now;
    // words per row: none without channels, two when they cross a word's end
    wire [LBW+1:0] span = {1'b0, c0l} + {1'b0, n};
    wire two = span > P[LBW+1:0];
    wire [1:0] wpr = n == 0 ? 2'd0 : two ? 2'd2 : 2'd1;
    /* verilator lint_off WIDTH */
    wire [QW:0] npush = req ? nrows * wpr : {(QW + 1) {1'b0}};
    /* verilator lint_on WIDTH */
    wire [TSW-1:0] age = now - m_ts[head];
    assign wr_en = count != 0 && age >= LAT[TSW-1:0];
    assign wr_addr = m_addr[head];
    assign wr_be = m_be[head];
    assign wr_data = m_data[head];
    wire [QW:0] after = {1'b0, count} - {{QW{1'b0}}, wr_en};
    assign room = npush == 0 || (npush > DEPTH[QW:0] ? after == 0 : after + npush <= DEPTH[QW:0]);
    // the two runs of a row's word (sim_runs_direct)
    wire [LBW:0] rest0 = P[LBW:0] - {1'b0, c0l};
    wire [LBW:0] len0 = two ? rest0 : n;
    wire [LBW:0] len1 = n - len0;
    wire [LBW+1:0] end0 = {1'b0, c0l} + {1'b0, len0};
    wire z0 = !two && c0w == co_w && end0 == {2'b0, co_l};
    wire z1 = two && c0w + 1'b1 == co_w && len1 == {1'b0, co_l};
    wire [P:0] ones = {(P + 1) {1'b1}};
    /* verilator lint_off WIDTH */
    wire [P-1:0] be0 = z0 ? ones << c0l : ~(ones << len0) << c0l;
    wire [P-1:0] be1 = z1 ? ones[P-1:0] : ~(ones << len1);
    /* verilator lint_on WIDTH */
    wire [QW:0] tail_x = {1'b0, head} + {1'b0, count};
    // row v's words go to slots tail + v * wpr (+ 1), modulo RING
    wire [QW-1:0] slot0[0:NV-1], slot1[0:NV-1];
    genvar gv;
    generate
        for (gv = 0; gv < NV; gv = gv + 1) begin : g_slot
            localparam [QW+1:0] V1 = gv, V2 = 2 * gv, R = RING[QW+1:0];
            wire [QW+1:0] a = {1'b0, tail_x} + (two ? V2 : V1);
            wire [QW+1:0] a1 = a >= R ? a - R : a;
            wire [QW+1:0] a2 = a1 >= R ? a1 - R : a1;  // < RING
            wire [QW+1:0] b = a2 + 1'b1;
            wire [QW+1:0] b1 = b >= R ? b - R : b;
            /* verilator lint_off UNUSEDSIGNAL */
            wire [QW+1:0] s0 = a2, s1 = b1;
            /* verilator lint_on UNUSEDSIGNAL */
            assign slot0[gv] = s0[QW-1:0];
            assign slot1[gv] = s1[QW-1:0];
        end
    endgenerate
    integer v;
    always @(posedge clk) begin
        if (rst) begin
            head <= {QW{1'b0}};
            count <= {QW{1'b0}};
            now <= {TSW{1'b0}};
        end else begin
            now <= now + 1'b1;
            if (wr_en) head <= head == RING[QW-1:0] - 1'b1 ? {QW{1'b0}} : head + 1'b1;
            /* verilator lint_off WIDTH */
            count <= after + (push ? npush : {(QW + 1) {1'b0}});
            /* verilator lint_on WIDTH */
            if (push)
                for (v = 0; v < NV; v = v + 1)
                    if (v < {{(32 - VW) {1'b0}}, nrows} && wpr != 0) begin
                        m_addr[slot0[v]] <= pix[MAW*v+:MAW] + c0w;
                        m_be[slot0[v]] <= be0;
                        m_data[slot0[v]] <= qv[8*P*v+:8*P] << (8 * c0l);
                        m_ts[slot0[v]] <= now;
                        if (two) begin
                            m_addr[slot1[v]] <= pix[MAW*v+:MAW] + c0w + 1'b1;
                            m_be[slot1[v]] <= be1;
                            m_data[slot1[v]] <= qv[8*P*v+:8*P] >> (8 * len0);
                            m_ts[slot1[v]] <= now;
                        end
                    end
        end
    end
endmodule
