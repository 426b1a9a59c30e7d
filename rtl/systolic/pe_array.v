// The PE array (C model: src/sim/systolic/pe_array.c): BR x BC banks of
// NR x NC PEs (the bank arrangement, CfgMod: BR banks stacked north-south,
// BC side by side).  Activations enter every row from the west and cross
// bank borders like any PE border, weights every column from the north.
// The array has R = BR*NR rows, C = BC*NC columns and R x BC output MUXes
// (one per bank row), indexed m = r*BC + bc.
module pe_array #(
    parameter NR = 16,
    parameter NC = 16,
    parameter BR = 2,
    parameter BC = 2,
    parameter ACC_W = 26,
    parameter TW = 7,
    parameter CW = 6
) (
    input wire clk,
    input wire rst,
    input wire [BR*NR-1:0] in_a_vld,
    input wire [8*BR*NR-1:0] in_a_v,
    input wire [BR*NR-1:0] in_a_first,
    input wire [BR*NR-1:0] in_a_last,
    input wire [TW*BR*NR-1:0] in_a_tag,
    input wire [BC*NC-1:0] in_w_vld,
    input wire [8*BC*NC-1:0] in_w_v,
    output wire [BR*NR*BC-1:0] mux_vld,
    output wire [CW*BR*NR*BC-1:0] mux_c,
    output wire [ACC_W*BR*NR*BC-1:0] mux_acc,
    output wire [TW*BR*NR*BC-1:0] mux_tag,
    output wire [BR*NR*BC-1:0] mux_err,
    // PE (r, c)'s registers at [DW*(r*C + c) +: DW]
    output wire [BR*NR*BC*NC*(ACC_W+TW+20)-1:0] dbg
);
    localparam R = BR * NR, C = BC * NC, DW = ACC_W + TW + 20;
    // activations between bank columns: bank column bc reads a_*[bc], drives
    // a_*[bc+1]; weights between bank rows likewise (what leaves the east and
    // south edges goes nowhere)
    /* verilator lint_off UNUSEDSIGNAL */
    wire [R*(BC+1)-1:0] a_vld, a_first, a_last;
    wire [8*R*(BC+1)-1:0] a_v;
    wire [TW*R*(BC+1)-1:0] a_tag;
    wire [C*(BR+1)-1:0] w_vld;
    wire [8*C*(BR+1)-1:0] w_v;
    /* verilator lint_on UNUSEDSIGNAL */
    assign a_vld[R-1:0] = in_a_vld;
    assign a_v[8*R-1:0] = in_a_v;
    assign a_first[R-1:0] = in_a_first;
    assign a_last[R-1:0] = in_a_last;
    assign a_tag[TW*R-1:0] = in_a_tag;
    assign w_vld[C-1:0] = in_w_vld;
    assign w_v[8*C-1:0] = in_w_v;

    genvar br, bc, r;
    generate
        for (br = 0; br < BR; br = br + 1) begin : g_br
            for (bc = 0; bc < BC; bc = bc + 1) begin : g_bc
                wire [NR-1:0] m_vld, m_err;
                wire [CW*NR-1:0] m_c;
                wire [ACC_W*NR-1:0] m_acc;
                wire [TW*NR-1:0] m_tag;
                wire [NR*NC*DW-1:0] d;
                pe_bank #(
                    .NR(NR),
                    .NC(NC),
                    .ACC_W(ACC_W),
                    .TW(TW),
                    .CW(CW)
                ) u_bank (
                    .clk(clk),
                    .rst(rst),
                    .in_a_vld(a_vld[R*bc+NR*br+:NR]),
                    .in_a_v(a_v[8*(R*bc+NR*br)+:8*NR]),
                    .in_a_first(a_first[R*bc+NR*br+:NR]),
                    .in_a_last(a_last[R*bc+NR*br+:NR]),
                    .in_a_tag(a_tag[TW*(R*bc+NR*br)+:TW*NR]),
                    .in_w_vld(w_vld[C*br+NC*bc+:NC]),
                    .in_w_v(w_v[8*(C*br+NC*bc)+:8*NC]),
                    .out_a_vld(a_vld[R*(bc+1)+NR*br+:NR]),
                    .out_a_v(a_v[8*(R*(bc+1)+NR*br)+:8*NR]),
                    .out_a_first(a_first[R*(bc+1)+NR*br+:NR]),
                    .out_a_last(a_last[R*(bc+1)+NR*br+:NR]),
                    .out_a_tag(a_tag[TW*(R*(bc+1)+NR*br)+:TW*NR]),
                    .out_w_vld(w_vld[C*(br+1)+NC*bc+:NC]),
                    .out_w_v(w_v[8*(C*(br+1)+NC*bc)+:8*NC]),
                    .mux_vld(m_vld),
                    .mux_c(m_c),
                    .mux_acc(m_acc),
                    .mux_tag(m_tag),
                    .mux_err(m_err),
                    .dbg(d)
                );
                for (r = 0; r < NR; r = r + 1) begin : g_r
                    localparam integer M = (NR * br + r) * BC + bc;
                    assign mux_vld[M] = m_vld[r];
                    assign mux_err[M] = m_err[r];
                    assign mux_c[CW*M+:CW] = m_c[CW*r+:CW];
                    assign mux_acc[ACC_W*M+:ACC_W] = m_acc[ACC_W*r+:ACC_W];
                    assign mux_tag[TW*M+:TW] = m_tag[TW*r+:TW];
                    assign dbg[DW*((NR*br+r)*C+NC*bc)+:DW*NC] = d[DW*NC*r+:DW*NC];
                end
            end
        end
    endgenerate
endmodule
