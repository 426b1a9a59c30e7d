// EasyNPU's PE controller (C model: src/sim/easynpu/pe_ctrl.c; docs/microarch.md
// §11.4, §11.8, §11.10): the inner loops of a load unit and the issue
// decision.  A unit's passes are its input channels (broadcast: the
// channels of its input word, ascending; multicast: one) times the kernel
// taps of its band (kernel row, kernel column); a pass's cycles are psum
// word ozi (outer) times tile position j: virtual row v works on position
// p = v * q + j while p < npos, psum entry e = ozi * q + j.  Each cycle it
// decides, in the C model's order, whether the array issues or why not:
// before the first issue the parameters (n_par words, usable Lw cycles
// after the last) or the first weight word not usable (fill); the unit not
// valid in its ifmap pad bank; the weight pad's head not usable; on the
// final pass, the write queue without room for the cycle's words.
//
// Its registers mirror pectl: the loop counters, the pass's registers (the
// tap's pad offset, the broadcast lane, first / final), and per virtual row
// the position (column px, row py in the tile) from which the pad entry
// (bank base + py * sh * xi + px * sw + tap offset) and the output pixel's
// word address (obase + py * wo * owpp + px * owpp) follow.  The outer
// loops (block, tile, input word, band) are the scheduler's: it hands the
// next unit's registers (nu_*) and the controller takes them when its unit
// ends (unit_next), or at the chain's start (rst).  Configuration (cfg_*):
// the decoded instruction's fields, held for the chain.  Fused stages, op2
// and max pooling are not here (docs/rtl.md "What is left").
module pe_ctrl #(
    parameter P = 16,
    parameter NV = 4,    // virtual rows at most (PE rows x lane groups)
    parameter LBW = 4,   // bits of a lane
    parameter EW = 6,    // bits of a psum entry
    parameter AW = 6,    // bits of an ifmap pad entry
    parameter VW = 3,    // bits of a virtual row count
    parameter CW = 16,   // loop counters, tile sizes
    parameter MAW = 14,  // main DTCM word address bits
    parameter UW = 8,    // unit index bits (a bank holds the unit, the next or one of the two before)
    parameter LW = 1     // weight memory latency (the parameter words')
) (
    input wire clk,
    input wire rst,  // the chain's start: unit 0 taken from nu_*
    input wire [CW-1:0] cfg_sh,
    input wire [CW-1:0] cfg_sw,
    input wire [CW-1:0] cfg_dh,
    input wire [CW-1:0] cfg_dw,
    input wire [CW-1:0] cfg_wk,
    input wire [VW-1:0] cfg_rows,
    input wire [LBW:0] cfg_L,
    input wire [CW-1:0] cfg_npar,
    input wire [AW:0] cfg_bank_size,
    input wire [MAW-1:0] cfg_wo,
    input wire [MAW-1:0] cfg_owpp,
    // the scheduler's next unit
    input wire nu_done,
    input wire [UW-1:0] nu_u,
    input wire nu_bank,
    input wire [CW-1:0] nu_q,
    input wire [CW-1:0] nu_npos,
    input wire [CW-1:0] nu_x,
    input wire [CW-1:0] nu_xi,
    input wire [CW-1:0] nu_qx,
    input wire [CW-1:0] nu_qr,
    input wire [CW-1:0] nu_zse,
    input wire [CW-1:0] nu_nch,
    input wire [LBW-1:0] nu_lane0,
    input wire [CW-1:0] nu_nkh,
    input wire nu_first,
    input wire nu_last,
    input wire [CW-1:0] nu_zk,
    input wire [MAW-1:0] nu_c0w,
    input wire [LBW-1:0] nu_c0l,
    input wire [CW-1:0] nu_wdx0,
    input wire [MAW-1:0] nu_obase,
    // the ifmap pad's banks, the weight pad, the writer
    input wire [2*UW-1:0] bk_unit,
    input wire [1:0] bk_valid,
    input wire w_rdy,
    input wire wq_room,
    // the decision and the issue's registers
    output wire [2:0] why,
    output wire iss,
    output wire [EW-1:0] e,
    output wire [LBW-1:0] lane,
    output wire first,
    output wire final_pass,
    output reg [VW-1:0] nrows,
    output wire [AW*NV-1:0] entry,
    output wire [LBW:0] nval,
    output wire [CW-1:0] wdx,
    output wire w_pop,
    output wire unit_next,  // the unit's last cycle issues: the next one is taken
    output wire bank_done,  // ... and its pad bank is read for the last time
    output reg u_bank,      // the unit's bank
    output wire [MAW*NV-1:0] oaddr,  // the output pixel's word address per virtual row
    output reg [MAW-1:0] c0w,  // channel of lane 0 of the psum word: word, lane
    output reg [LBW-1:0] c0l,
    output reg [UW-1:0] u_id,
    output reg done
);
    localparam [2:0] W_ISSUE = 3'd0, W_FILL = 3'd1, W_UNIT = 3'd2, W_WEIGHT = 3'd4, W_OFMAP = 3'd5, W_DONE = 3'd7;
    // the unit's registers
    reg u_first, u_last;
    reg [CW-1:0] q, x, zse, nch, nkh, zk, wdx0, shxi, dhxi;
    reg [LBW-1:0] lane0;
    reg [MAW-1:0] c0w0, obase;
    reg [LBW-1:0] c0l0;
    // the loops
    reg [CW-1:0] j, ozi, kw, khr, ch, tapoff, rowoff, par_cnt;
    reg [EW-1:0] k;
    reg first_pass, started;
    reg signed [CW:0] nrem;  // channels of the block from psum word ozi on
    wire j_end = j == q - 1'b1, o_end = ozi == zse - 1'b1, pass_end = j_end && o_end;
    wire kw_end = kw == cfg_wk - 1'b1, kh_end = khr == nkh - 1'b1, ch_end = ch == nch - 1'b1;
    wire last_pass = kw_end && kh_end && ch_end;
    assign first = u_first && first_pass;
    assign final_pass = u_last && last_pass;
    // the decision (pe_ctrl.c sim_pectl_step; every pass here is weighted
    // and reads the pads)
    wire [UW-1:0] bk_u = u_bank ? bk_unit[UW+:UW] : bk_unit[0+:UW];
    wire bank_ok = bk_valid[u_bank] && bk_u == u_id;
    assign why = done ? W_DONE :
                 (!started && (par_cnt != 0 || !w_rdy)) ? W_FILL :
                 !bank_ok ? W_UNIT :
                 !w_rdy ? W_WEIGHT :
                 (final_pass && !wq_room) ? W_OFMAP : W_ISSUE;
    assign iss = why == W_ISSUE;
    wire unit_end = iss && pass_end && last_pass;
    assign unit_next = unit_end;
    assign bank_done = unit_end;  // fused stages (passes after the last pad-reading one) are not here
    assign w_pop = iss && j_end;  // the word of psum word ozi is freed after its q cycles
    assign e = k;
    /* verilator lint_off WIDTH */
    assign lane = lane0 + ch[LBW-1:0];
    /* verilator lint_on WIDTH */
    assign wdx = wdx0 + ozi;
    wire signed [CW:0] L_s = {{(CW - LBW) {1'b0}}, cfg_L};
    assign nval = nrem >= L_s ? cfg_L : nrem > 0 ? nrem[LBW:0] : {(LBW + 1) {1'b0}};
    // where each virtual row starts in a unit: row v + 1 is q positions
    // after row v (q = qx rows and qr columns of the tile)
    genvar v;
    generate
        for (v = 0; v < NV; v = v + 1) begin : g_start
            wire [CW-1:0] px, py;  // row v's first position
            wire signed [CW:0] rem;  // npos - v * q
            if (v == 0) begin : g_0
                assign px = {CW{1'b0}};
                assign py = {CW{1'b0}};
                assign rem = {1'b0, nu_npos};
            end else begin : g_v
                wire [CW:0] s = {1'b0, g_start[v-1].px} + {1'b0, nu_qr};
                wire c = s >= {1'b0, nu_x};
                /* verilator lint_off UNUSEDSIGNAL */
                wire [CW:0] sx = c ? s - {1'b0, nu_x} : s;  // < x
                /* verilator lint_on UNUSEDSIGNAL */
                assign px = sx[CW-1:0];
                assign py = g_start[v-1].py + nu_qx + {{(CW - 1) {1'b0}}, c};
                assign rem = g_start[v-1].rem - {1'b0, nu_q};
            end
        end
    endgenerate
    wire load = rst || unit_end;
    // the next psum word's first channel: L lanes on, into the next word past P
    wire [LBW+1:0] c0l_s = {1'b0, c0l} + {1'b0, cfg_L};
    wire c0_wrap = c0l_s >= P[LBW+1:0];
    /* verilator lint_off UNUSEDSIGNAL */
    wire [LBW+1:0] c0l_n = c0_wrap ? c0l_s - P[LBW+1:0] : c0l_s;  // < P
    /* verilator lint_on UNUSEDSIGNAL */
    /* verilator lint_off UNUSEDSIGNAL */
    wire [2*CW-1:0] shxi_n = cfg_sh * nu_xi, dhxi_n = cfg_dh * nu_xi;  // < the bank size
    /* verilator lint_on UNUSEDSIGNAL */
    always @(posedge clk) begin
        if (rst) begin
            started <= 1'b0;
            par_cnt <= cfg_npar == 0 ? {CW{1'b0}} : cfg_npar - 1'b1 + LW[CW-1:0];
        end else begin
            if (par_cnt != 0) par_cnt <= par_cnt - 1'b1;
            if (iss) started <= 1'b1;
        end
        if (load) begin
            done <= nu_done;
            u_id <= nu_u;
            u_bank <= nu_bank;
            u_first <= nu_first;
            u_last <= nu_last;
            q <= nu_q;
            x <= nu_x;
            zse <= nu_zse;
            nch <= nu_nch;
            nkh <= nu_nkh;
            zk <= nu_zk;
            wdx0 <= nu_wdx0;
            lane0 <= nu_lane0;
            c0w0 <= nu_c0w;
            c0l0 <= nu_c0l;
            obase <= nu_obase;
            shxi <= shxi_n[CW-1:0];
            dhxi <= dhxi_n[CW-1:0];
            k <= {EW{1'b0}};
            j <= {CW{1'b0}};
            ozi <= {CW{1'b0}};
            kw <= {CW{1'b0}};
            khr <= {CW{1'b0}};
            ch <= {CW{1'b0}};
            tapoff <= {CW{1'b0}};
            rowoff <= {CW{1'b0}};
            first_pass <= 1'b1;
            c0w <= nu_c0w;
            c0l <= nu_c0l;
            nrem <= {1'b0, nu_zk};
        end else if (iss) begin
            if (!pass_end) begin
                k <= k + 1'b1;
                if (j_end) begin
                    // the next psum word: its channels L further on
                    j <= {CW{1'b0}};
                    ozi <= ozi + 1'b1;
                    nrem <= nrem - L_s;
                    c0l <= c0l_n[LBW-1:0];
                    if (c0_wrap) c0w <= c0w + 1'b1;
                end else begin
                    j <= j + 1'b1;
                end
            end else begin
                // the next pass: the next kernel column, row, then channel
                k <= {EW{1'b0}};
                j <= {CW{1'b0}};
                ozi <= {CW{1'b0}};
                first_pass <= 1'b0;
                c0w <= c0w0;
                c0l <= c0l0;
                nrem <= {1'b0, zk};
                if (!kw_end) begin
                    kw <= kw + 1'b1;
                    tapoff <= tapoff + cfg_dw;
                end else begin
                    kw <= {CW{1'b0}};
                    if (!kh_end) begin
                        khr <= khr + 1'b1;
                        rowoff <= rowoff + dhxi;
                        tapoff <= rowoff + dhxi;
                    end else begin
                        khr <= {CW{1'b0}};
                        rowoff <= {CW{1'b0}};
                        tapoff <= {CW{1'b0}};
                        ch <= ch + 1'b1;
                    end
                end
            end
        end
    end
    // per virtual row: its position in the tile, its pad entry and output word
    wire [AW:0] bank_base = u_bank ? cfg_bank_size : {(AW + 1) {1'b0}};
    /* verilator lint_off WIDTH */
    wire [MAW-1:0] woowpp = cfg_wo * cfg_owpp;
    /* verilator lint_on WIDTH */
    wire [NV-1:0] act;
    generate
        for (v = 0; v < NV; v = v + 1) begin : g_row
            reg [CW-1:0] px, py, px0, py0;
            reg signed [CW:0] rem0;  // npos - v * q: the row works while j < rem0
            always @(posedge clk) begin
                if (load) begin
                    px <= g_start[v].px;
                    py <= g_start[v].py;
                    px0 <= g_start[v].px;
                    py0 <= g_start[v].py;
                    rem0 <= g_start[v].rem;
                end else if (iss) begin
                    if (j_end) begin
                        px <= px0;
                        py <= py0;
                    end else if (px == x - 1'b1) begin
                        px <= {CW{1'b0}};
                        py <= py + 1'b1;
                    end else begin
                        px <= px + 1'b1;
                    end
                end
            end
            // the entry is inside the pads: the sums fit AW bits
            /* verilator lint_off UNUSEDSIGNAL */
            wire [2*CW-1:0] hw = py * shxi + px * cfg_sw;
            wire [AW:0] ent = bank_base + hw[AW:0] + tapoff[AW:0];
            /* verilator lint_on UNUSEDSIGNAL */
            assign entry[AW*v+:AW] = ent[AW-1:0];
            /* verilator lint_off WIDTH */
            wire [MAW-1:0] pyo = py, pxo = px;
            /* verilator lint_on WIDTH */
            assign oaddr[MAW*v+:MAW] = obase + pyo * woowpp + pxo * cfg_owpp;
            assign act[v] = v < cfg_rows && rem0 > $signed({1'b0, j});
        end
    endgenerate
    // the active rows are a prefix: those whose position is inside the tile
    integer r;
    always @(*) begin
        nrows = {VW{1'b0}};
        for (r = 0; r < NV; r = r + 1) nrows = nrows + {{(VW - 1) {1'b0}}, act[r]};
    end
endmodule
