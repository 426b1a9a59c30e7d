// EasyNPU's PE array (C model: sim_pe_issue in src/sim/easynpu/pe.c): ROWS
// PE rows of P PEs.  A row is cut into lg lane groups of L = P / lg lanes
// (§16; lg = 2^lgsel, lg <= LGMAX): virtual row v = row * lg + g computes
// the same output channels as the others at its own output position, from
// pad read port v.  In an issued cycle every virtual row below nrows runs:
// a broadcast MAC (conv, fc: every PE of the group takes lane `lane` of the
// group's pad word) or a multicast MAC (dwconv, avgpool: PE i takes lane i).
// The weight word (the weight pad's head) and the parameter registers of the
// psum word (bias, M, S per lane) are shared by the rows.  On the final pass
// the entry's requantized outputs are ready D + Rq cycles after the issue
// (LAT): a countdown per entry, which a fused stage or the writer waits for.
module pe_array #(
    parameter P = 16,
    parameter ROWS = 1,
    parameter LGMAX = 4,
    parameter NLG = 3,  // lane-group choices: lg = 1, 2, ..., LGMAX
    parameter LGSW = 2, // bits of lgsel
    parameter ACC_W = 32,
    parameter DEPTH = 64,
    parameter EW = 6,
    parameter MB = 20,
    parameter LBW = 4,  // bits of a lane
    parameter VW = 3,   // bits of a virtual row count (0..ROWS*LGMAX)
    parameter LAT = 4   // D + Rq
) (
    input wire clk,
    input wire rst,
    input wire en,
    input wire dw,  // multicast (dwconv, avgpool) rather than broadcast
    input wire first,
    input wire final_pass,
    input wire [EW-1:0] e,
    input wire [LBW-1:0] lane,
    input wire [LGSW-1:0] lgsel,
    input wire [VW-1:0] nrows,
    input wire [LBW:0] nval,
    input wire [8*P*ROWS*LGMAX-1:0] pad_word,  // read port v's word
    input wire [8*P-1:0] w_word,
    input wire [32*P-1:0] bias,
    input wire [MB*P-1:0] m,
    input wire [6*P-1:0] s,
    input wire [7:0] zp,
    input wire [7:0] lo,
    input wire [7:0] hi,
    output wire [DEPTH-1:0] ready,
    input wire [EW-1:0] dbg_e,
    output wire [ACC_W*P*ROWS-1:0] dbg_ps,
    output wire [8*P*ROWS-1:0] dbg_sv,
    // the requantized word of each virtual row (its group's L lanes from
    // lane 0, 0 after them): what the writer pushes on a final pass
    output wire [8*P*ROWS*LGMAX-1:0] qv
);
    localparam CW = 8;
    wire [8*P*ROWS-1:0] q_pe;
    genvar d, r, i, c, vv;
    generate
        // per entry: cycles until its requantized outputs are ready
        for (d = 0; d < DEPTH; d = d + 1) begin : g_rdy
            reg [CW-1:0] wait_cnt;
            always @(posedge clk) begin
                if (rst) wait_cnt <= {CW{1'b0}};
                else if (en && final_pass && e == d[EW-1:0]) wait_cnt <= LAT > 0 ? LAT[CW-1:0] - 1'b1 : {CW{1'b0}};
                else if (wait_cnt != 0) wait_cnt <= wait_cnt - 1'b1;
            end
            assign ready[d] = wait_cnt == 0;
        end
        for (r = 0; r < ROWS; r = r + 1) begin : g_row
            for (i = 0; i < P; i = i + 1) begin : g_pe
                // the lane's group and its place in it, for each lg
                wire [VW-1:0] gtab[0:NLG-1];
                wire [LBW:0] otab[0:NLG-1];
                for (c = 0; c < NLG; c = c + 1) begin : g_tab
                    localparam integer G = i / (P >> c), O = i % (P >> c);
                    assign gtab[c] = G[VW-1:0];
                    assign otab[c] = O[LBW:0];
                end
                wire [VW-1:0] v = (r[VW-1:0] << lgsel) + gtab[lgsel];
                wire [8*P-1:0] word = pad_word[8*P*v+:8*P];
                wire [7:0] x = dw ? word[8*i+:8] : word[8*lane+:8];
                pe #(
                    .ACC_W(ACC_W),
                    .DEPTH(DEPTH),
                    .EW(EW),
                    .MB(MB)
                ) u_pe (
                    .clk(clk),
                    .en(en && v < nrows),
                    .first(first),
                    .final_pass(final_pass),
                    .keep(otab[lgsel] < nval),
                    .e(e),
                    .x(x),
                    .w(w_word[8*i+:8]),
                    .bias(bias[32*i+:32]),
                    .m(m[MB*i+:MB]),
                    .s(s[6*i+:6]),
                    .zp(zp),
                    .lo(lo),
                    .hi(hi),
                    .dbg_e(dbg_e),
                    .dbg_ps(dbg_ps[ACC_W*(P*r+i)+:ACC_W]),
                    .dbg_sv(dbg_sv[8*(P*r+i)+:8]),
                    .qo(q_pe[8*(P*r+i)+:8])
                );
            end
        end
        // virtual row vv with lg = 2^c: PE row vv >> c, lanes from (vv mod lg) * L
        for (vv = 0; vv < ROWS * LGMAX; vv = vv + 1) begin : g_qv
            wire [8*P-1:0] opt[0:NLG-1];
            for (c = 0; c < NLG; c = c + 1) begin : g_opt
                localparam integer PR = vv >> c, L = P >> c, OFF = (vv % (1 << c)) * L;
                if (PR < ROWS && L == P) begin : g_all
                    assign opt[c] = q_pe[8*P*PR+:8*P];
                end else if (PR < ROWS) begin : g_in
                    assign opt[c] = {{(8 * (P - L)) {1'b0}}, q_pe[8*(P*PR+OFF)+:8*L]};
                end else begin : g_out
                    assign opt[c] = {(8 * P) {1'b0}};
                end
            end
            assign qv[8*P*vv+:8*P] = opt[lgsel];
        end
    endgenerate
endmodule
