.format 3.0
.arch easynpu
end
.frobnicate
