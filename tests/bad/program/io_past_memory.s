.format 3.0
.arch easynpu
end
.io input name="x" dtype=int8 layout=nhwc shape=1x64x64x17 scale=0.5 zero_point=0 mem=main addr=0
