; a hand-written test program
.arch easynpu

relu name="r" cast_mode=multicast hi=4 wi=4 ci=16 ho=4 wo=4 co=16 hk=1 wk=1 stride_h=1 stride_w=1 dil_h=1 dil_w=1 groups=1 tile_x=4 tile_y=4 tile_xi=4 tile_yi=4 zs=1 rows=1 ofmap_addr=100 clamp_lo=-128 clamp_hi=127 out_mult=1 src="Relu_0" ; the layer
sync host_op=0x0
end
.table name=Tanh addr=0x40 segments=16 max_err_lsb=1.5
.io input name="in put" dtype=int8 layout=nhwc shape=1x4x4x16 scale=0.5 zero_point=-1 mem=main addr=0
.io output name=out dtype=int8 layout=nhwc shape=1x4x4x16 scale=0.25 zero_point=2 mem=main addr=100
.io host name=p dtype=float32 shape=scalar mem=host
.hostop kind="ArgMax" in=1 out=2 iparam=0,1
.section weights
.hex 0102 0304
.zero 12
.hex FFfe
.section dtcm_init
