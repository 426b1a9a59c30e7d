.format 3.0
.arch easynpu
end
.section skip_init
.zero 99999999999
