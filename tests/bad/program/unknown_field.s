.format 3.0
.arch easynpu
relu name="r" cast_mode=multicast hi=4 wi=4 ci=16 ho=4 wo=4 co=16 hk=1 wk=1 stride_h=1 stride_w=1 dil_h=1 dil_w=1 groups=1 tile_x=4 tile_y=4 tile_xi=4 tile_yi=4 zs=1 rows=1 ofmap_addr=100 clamp_lo=-128 clamp_hi=127 out_mult=1 foo=1
end
