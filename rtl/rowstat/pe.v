// One PE of the row-stationary array (C model: src/sim/rowstat/pe.c,
// docs/rowstat.md "A PE"): the 1-D convolution primitive.
//   PE top:  the input FIFO (FD values) the ifmap network writes, up to NVI
//            values a cycle, in front of the ifmap loop buffer;
//   PE:      the ifmap loop buffer (LBD), a circular window of L = q*wk
//            values whose oldest R are replaced from the FIFO while the last
//            filter of an output column reads them ("if trash"), and the
//            filter loop buffer (FLD), p filters of L values the filter
//            network writes (up to NVF a cycle) and every output column
//            reuses;
//   PE core: a DW x DW multiplier and a PSW-bit adder whose psum is the
//            psum scratchpad's entry m (PD entries, one per filter) or, for
//            a unit's first MAC, the link from the PE above (0 at the top of
//            a column); a unit's last MAC writes the link to the PE below
//            instead of the scratchpad, usable D cycles later.
// A unit is one output column's psum of one filter (L MACs: column, then
// channel); units run output column by output column, the p filters of each
// in turn, U = wo*p of them in a pass.
//
// Timing, as the C model's cycle (ctrl.c pass_cycle): the networks deliver
// before the PEs step, so a value delivered in a cycle can be popped (FIFO
// bypass) or read (filter buffer bypass) in it; the PE below steps before
// this one, so a link it takes (out_take) is free for this PE's last MAC in
// the same cycle.  cfg loads a pass's registers and empties the PE (the
// controller's configuration edge, before the pass's first cycle).
module pe #(
    parameter DW = 16,    // value bits (8- or 16-bit data, sign-extended)
    parameter PSW = 64,   // psum bits
    parameter FD = 256,   // input FIFO
    parameter LBD = 12,   // ifmap loop buffer
    parameter FLD = 224,  // filter loop buffer
    parameter PD = 24,    // psum scratchpad
    parameter NVI = 4,    // ifmap network values a cycle
    parameter NVF = 4,    // filter network values a cycle
    parameter CW = 9,     // buffer counters and indexes: holds max(FD, LBD, FLD, PD)
    parameter UW = 24,    // unit and output column counters
    parameter DPW = 5,    // rs_pe_pipeline
    parameter HAS_IN = 1  // a PE above feeds the link (0: the top row)
) (
    input wire clk,
    // the pass's registers
    input wire cfg,
    input wire cfg_used,
    input wire [CW-1:0] cfg_L,
    input wire [CW-1:0] cfg_p,
    input wire [UW-1:0] cfg_wo,
    input wire [CW-1:0] cfg_R,
    input wire [DPW-1:0] cfg_D,
    // the networks' deliveries this cycle (this PE's column node matched)
    input wire [NVI-1:0] if_vld,
    input wire [NVI*DW-1:0] if_val,
    input wire [NVF-1:0] fl_vld,
    input wire [NVF*DW-1:0] fl_val,
    input wire go,  // the pass's filters are all in
    // the psum link from the PE above
    input wire in_full,
    input wire [UW-1:0] in_unit,
    input wire [PSW-1:0] in_val,
    input wire in_rdy,
    output wire in_take,
    // the link to the PE below (or the output network)
    input wire out_take,
    output reg out_full  /*verilator public_flat_rd*/,
    output reg [UW-1:0] out_unit  /*verilator public_flat_rd*/,
    output reg [PSW-1:0] out_val  /*verilator public_flat_rd*/,
    output wire out_rdy  /*verilator public_flat_rd*/
);
    // one class for every PE in the Verilated model, not flattened into
    // the array: eyeriss's 168-PE testbench built in 47 s instead of 105 s
    // (half the C++)
    /* verilator no_inline_module */
    localparam FAW = FD > 1 ? $clog2(FD) : 1;
    localparam LAW = LBD > 1 ? $clog2(LBD) : 1;
    localparam FLAW = FLD > 1 ? $clog2(FLD) : 1;
    localparam PAW = PD > 1 ? $clog2(PD) : 1;
    localparam integer FDI = FD, FLDI = FLD, FDL = FD - 1;
    localparam [CW:0] FDC = FDI[CW:0], FLDC = FLDI[CW:0];
    localparam [CW-1:0] FLAST = FDL[CW-1:0];
    // co-simulation: this cycle's MAC and writes, and the cursors (read by
    // name through Verilator's scopes: flat output buses of every PE would
    // cost the model a concatenation per PE and cycle)
    wire mac  /*verilator public_flat_rd*/;
    wire lb_we  /*verilator public_flat_rd*/;
    wire [CW-1:0] lb_wa  /*verilator public_flat_rd*/;
    wire [DW-1:0] lb_wd  /*verilator public_flat_rd*/;
    wire ps_we  /*verilator public_flat_rd*/;
    wire [CW-1:0] ps_wa  /*verilator public_flat_rd*/;
    wire [PSW-1:0] ps_wd  /*verilator public_flat_rd*/;
    wire [NVI-1:0] if_dlv  /*verilator public_flat_rd*/ = if_vld;
    wire [NVF-1:0] fl_dlv  /*verilator public_flat_rd*/ = fl_vld;
    reg ovf  /*verilator public_flat_rd*/;
    reg [CW-1:0] fh  /*verilator public_flat_rd*/;
    reg [CW-1:0] fn  /*verilator public_flat_rd*/;
    reg [CW-1:0] lb_head  /*verilator public_flat_rd*/;
    reg [CW-1:0] lb_n  /*verilator public_flat_rd*/;
    reg [CW-1:0] flb_n  /*verilator public_flat_rd*/;
    reg filled  /*verilator public_flat_rd*/;
    reg done  /*verilator public_flat_rd*/;
    reg [UW-1:0] u  /*verilator public_flat_rd*/;
    reg [CW-1:0] k  /*verilator public_flat_rd*/;
    reg [UW-1:0] xo  /*verilator public_flat_rd*/;
    reg [CW-1:0] m  /*verilator public_flat_rd*/;
    reg [DW-1:0] fifo[0:FD-1];
    reg [DW-1:0] lb[0:LBD-1];
    reg [DW-1:0] flb[0:FLD-1];
    reg [PSW-1:0] ps[0:PD-1];
    reg [CW-1:0] L, R, p;
    reg [UW-1:0] wo, U;
    reg [DPW-1:0] D, cnt;
    reg [CW-1:0] fbase;  // m * L: filter m's first value in the filter buffer

    // ---- FIFO and filter buffer writes: the deliveries in packet order
    // (rank among this cycle's), dropped when full (ovf: the C model's
    // overflow error)
    reg [NVI-1:0] if_acc;
    reg [CW:0] if_pos[0:NVI-1];
    reg [CW-1:0] if_n;
    reg [DW-1:0] bypass;  // the first value delivered this cycle
    reg [NVF-1:0] fl_acc;
    reg [CW:0] fl_pos[0:NVF-1];
    reg [CW-1:0] fl_n;
    integer j;
    reg [CW:0] rk;
    always @(*) begin
        rk = 0;
        if_n = 0;
        bypass = 0;
        for (j = NVI - 1; j >= 0; j = j - 1) if (if_vld[j]) bypass = if_val[j*DW+:DW];
        for (j = 0; j < NVI; j = j + 1) begin
            if_acc[j] = if_vld[j] && {1'b0, fn} + rk < FDC;
            // fh + fn + rank < 2 FD: one subtraction wraps it
            if_pos[j] = {1'b0, fh} + {1'b0, fn} + rk;
            if (if_pos[j] >= FDC) if_pos[j] = if_pos[j] - FDC;
            if (if_acc[j]) if_n = if_n + 1'b1;
            if (if_vld[j]) rk = rk + 1'b1;
        end
        rk = 0;
        fl_n = 0;
        for (j = 0; j < NVF; j = j + 1) begin
            fl_pos[j] = {1'b0, flb_n} + rk;
            fl_acc[j] = fl_vld[j] && fl_pos[j] < FLDC;
            if (fl_acc[j]) fl_n = fl_n + 1'b1;
            if (fl_vld[j]) rk = rk + 1'b1;
        end
    end
    wire fifo_rdy = fn != 0 || |if_vld;
    wire [DW-1:0] head = fn != 0 ? fifo[fh[FAW-1:0]] : bypass;

    // ---- the step
    wire fill = !done && !filled && fifo_rdy;
    wire run = !done && filled && go;
    // the last filter of an output column but the last replaces the oldest
    // R window values as it reads them
    wire col_end = m == p - 1'b1 && xo < wo - 1'b1;
    wire pull = col_end && k < R;
    wire last = k == L - 1'b1;
    wire first = k == 0;
    wire in_ok = !(first && HAS_IN != 0) || (in_full && in_unit == u && in_rdy);
    wire out_busy = out_full && !out_take;
    assign mac = run && in_ok && (!pull || fifo_rdy) && !(last && out_busy);
    assign in_take = mac && first && HAS_IN != 0;
    wire pop = fill || (mac && pull);

    wire [CW:0] slot_s = {1'b0, lb_head} + {1'b0, k};
    // the wrap: both < 2 L, so the sum's top bit is 0 after it
    /* verilator lint_off UNUSEDSIGNAL */
    wire [CW:0] slot = slot_s >= {1'b0, L} ? slot_s - {1'b0, L} : slot_s;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [CW:0] widx = {1'b0, fbase} + {1'b0, k};
    reg [DW-1:0] w;
    always @(*) begin
        w = flb[widx[FLAW-1:0]];
        // a filter value delivered this cycle is read in it
        for (j = 0; j < NVF; j = j + 1) if (fl_acc[j] && fl_pos[j] == widx) w = fl_val[j*DW+:DW];
    end
    wire [DW-1:0] x = lb[slot[LAW-1:0]];
    wire signed [2*DW-1:0] prod = $signed(x) * $signed(w);
    wire [PSW-1:0] prod_x;
    generate
        if (PSW > 2 * DW) begin : g_sext
            assign prod_x = {{(PSW - 2 * DW) {prod[2*DW-1]}}, prod};
        end else begin : g_same
            assign prod_x = prod[PSW-1:0];
        end
    endgenerate
    wire [PSW-1:0] acc_in = first ? (HAS_IN != 0 ? in_val : {PSW{1'b0}}) : ps[m[PAW-1:0]];
    wire [PSW-1:0] acc = acc_in + prod_x;

    assign lb_we = fill || (mac && pull);
    assign lb_wa = fill ? lb_n : slot[CW-1:0];
    assign lb_wd = head;
    assign ps_we = mac && !last;
    assign ps_wa = m;
    assign ps_wd = acc;
    assign out_rdy = cnt == 0;

    wire [CW:0] head_s = {1'b0, lb_head} + {1'b0, R};
    /* verilator lint_off UNUSEDSIGNAL */
    wire [CW:0] head_w = head_s >= {1'b0, L} ? head_s - {1'b0, L} : head_s;
    /* verilator lint_on UNUSEDSIGNAL */
    always @(posedge clk) begin
        for (j = 0; j < NVI; j = j + 1) if (if_acc[j]) fifo[if_pos[j][FAW-1:0]] <= if_val[j*DW+:DW];
        for (j = 0; j < NVF; j = j + 1) if (fl_acc[j]) flb[fl_pos[j][FLAW-1:0]] <= fl_val[j*DW+:DW];
        if (lb_we) lb[lb_wa[LAW-1:0]] <= lb_wd;
        if (ps_we) ps[ps_wa[PAW-1:0]] <= ps_wd;
        if (cfg) begin
            L <= cfg_L;
            R <= cfg_R;
            p <= cfg_p;
            wo <= cfg_wo;
            U <= cfg_wo * {{(UW - CW) {1'b0}}, cfg_p};
            D <= cfg_D;
            fh <= 0;
            fn <= 0;
            lb_head <= 0;
            lb_n <= 0;
            flb_n <= 0;
            filled <= 0;
            done <= !cfg_used;
            u <= 0;
            k <= 0;
            xo <= 0;
            m <= 0;
            fbase <= 0;
            out_full <= 0;
            cnt <= 0;
            ovf <= 0;
        end else begin
            ovf <= if_vld != if_acc || fl_vld != fl_acc;
            fn <= fn + if_n - {{(CW - 1) {1'b0}}, pop};
            if (pop) fh <= fh == FLAST ? 0 : fh + 1'b1;
            flb_n <= flb_n + fl_n;
            if (fill) begin
                lb_n <= lb_n + 1'b1;
                if (lb_n + 1'b1 == L) filled <= 1;
            end
            if (mac) begin
                if (!last) k <= k + 1'b1;
                else begin
                    k <= 0;
                    if (col_end) lb_head <= head_w[CW-1:0];
                    if (m == p - 1'b1) begin
                        m <= 0;
                        fbase <= 0;
                        xo <= xo + 1'b1;
                    end else begin
                        m <= m + 1'b1;
                        fbase <= fbase + L;
                    end
                    u <= u + 1'b1;
                    if (u + 1'b1 == U) done <= 1;
                end
            end
            if (mac && last) begin
                out_full <= 1;
                out_unit <= u;
                out_val <= acc;
                cnt <= D - 1'b1;
            end else begin
                if (out_take) out_full <= 0;
                if (cnt != 0) cnt <= cnt - 1'b1;
            end
        end
    end
endmodule
