.format 2.0
.arch easynpu
end
.frobnicate
