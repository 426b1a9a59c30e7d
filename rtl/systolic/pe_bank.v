// One bank of NR x NC PEs (C model: src/sim/systolic/pe_bank.c): its rows
// pass the weights south one row per cycle; each row has its own output
// MUX.  The bank's west activations come from the bank to the west (or the
// array's west edge), its north weights from the bank above (or the north
// edge).
module pe_bank #(
    parameter NR = 16,
    parameter NC = 16,
    parameter ACC_W = 26,
    parameter TW = 7,
    parameter CW = 6
) (
    input wire clk,
    input wire rst,
    input wire [NR-1:0] in_a_vld,
    input wire [8*NR-1:0] in_a_v,
    input wire [NR-1:0] in_a_first,
    input wire [NR-1:0] in_a_last,
    input wire [TW*NR-1:0] in_a_tag,
    input wire [NC-1:0] in_w_vld,
    input wire [8*NC-1:0] in_w_v,
    output wire [NR-1:0] out_a_vld,
    output wire [8*NR-1:0] out_a_v,
    output wire [NR-1:0] out_a_first,
    output wire [NR-1:0] out_a_last,
    output wire [TW*NR-1:0] out_a_tag,
    output wire [NC-1:0] out_w_vld,
    output wire [8*NC-1:0] out_w_v,
    output wire [NR-1:0] mux_vld,
    output wire [CW*NR-1:0] mux_c,
    output wire [ACC_W*NR-1:0] mux_acc,
    output wire [TW*NR-1:0] mux_tag,
    output wire [NR-1:0] mux_err,
    output wire [NR*NC*(ACC_W+TW+20)-1:0] dbg
);
    localparam DW = ACC_W + TW + 20;
    // weights between rows: row r reads w[r], drives w[r+1]
    wire [NC*(NR+1)-1:0] w_vld;
    wire [8*NC*(NR+1)-1:0] w_v;
    assign w_vld[NC-1:0] = in_w_vld;
    assign w_v[8*NC-1:0] = in_w_v;

    genvar r;
    generate
        for (r = 0; r < NR; r = r + 1) begin : g_row
            pe_row #(
                .NC(NC),
                .ACC_W(ACC_W),
                .TW(TW),
                .CW(CW)
            ) u_row (
                .clk(clk),
                .rst(rst),
                .in_a_vld(in_a_vld[r]),
                .in_a_v(in_a_v[8*r+:8]),
                .in_a_first(in_a_first[r]),
                .in_a_last(in_a_last[r]),
                .in_a_tag(in_a_tag[TW*r+:TW]),
                .in_w_vld(w_vld[NC*r+:NC]),
                .in_w_v(w_v[8*NC*r+:8*NC]),
                .out_a_vld(out_a_vld[r]),
                .out_a_v(out_a_v[8*r+:8]),
                .out_a_first(out_a_first[r]),
                .out_a_last(out_a_last[r]),
                .out_a_tag(out_a_tag[TW*r+:TW]),
                .out_w_vld(w_vld[NC*(r+1)+:NC]),
                .out_w_v(w_v[8*NC*(r+1)+:8*NC]),
                .mux_vld(mux_vld[r]),
                .mux_c(mux_c[CW*r+:CW]),
                .mux_acc(mux_acc[ACC_W*r+:ACC_W]),
                .mux_tag(mux_tag[TW*r+:TW]),
                .mux_err(mux_err[r]),
                .dbg(dbg[DW*NC*r+:DW*NC])
            );
        end
    endgenerate

    assign out_w_vld = w_vld[NC*NR+:NC];
    assign out_w_v = w_v[8*NC*NR+:8*NC];
endmodule
