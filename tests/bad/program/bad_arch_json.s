.format 3.0
.arch {"base": "easynpu", "pes": 3}
end
